import AppStoreModels
import AppStoreTestSupport
import Foundation
import KafkaClient
import Testing

@testable import NotificationStore

@Suite("A verified notification as a row: the decoded JSON PostgreSQL can hold", .tags(.fast))
struct NotificationRowTests {
    /// A V2 body whose transaction payload is `transactionJSON`; the builder reads it without verifying.
    static func row(transactionJSON: String) throws(UnstorableNotification) -> NotificationRow {
        func jws(_ payload: String) -> String {
            "\(Base64URL.encode(Array("{}".utf8))).\(Base64URL.encode(Array(payload.utf8))).c2ln"
        }
        let uuid = UUID().uuidString.lowercased()
        let payload =
            #"{"notificationType":"DID_RENEW","notificationUUID":"\#(uuid)","data":{"signedTransactionInfo":"\#(jws(transactionJSON))"}}"#
        let raw = RawNotification(
            body: Array(#"{"signedPayload":"\#(jws(payload))"}"#.utf8),
            key: nil,
            headers: [:],
            receivedAt: Date(timeIntervalSince1970: 1_780_000_000),
            source: KafkaTopicPartitionOffset(topic: "raw", partition: 0, offset: 1)
        )
        let notification = DecodedNotificationV2(
            payload: ResponseBodyV2DecodedPayload(notificationType: .didRenew, notificationUUID: uuid),
            transactionInfo: JWSTransactionDecodedPayload(originalTransactionId: "1")
        )
        return try NotificationRow(ordinal: 0, notification: .v2(notification), raw: raw)
    }

    @Test(
        "a \\u0000 escape anywhere in the decoded JSON makes it UNSTORABLE; an escaped backslash before u0000 does not"
    )
    func escapedNUL() throws {
        #expect(throws: UnstorableNotification.self) {
            try Self.row(transactionJSON: #"{"originalTransactionId":"1","appAccountToken":"a\u0000b"}"#)
        }
        let row = try Self.row(transactionJSON: #"{"originalTransactionId":"1","note":"a\\u0000b"}"#)
        #expect(row.decoded.hasSuffix(#""transactionInfo":{"originalTransactionId":"1","note":"a\\u0000b"}}"#))
    }

    @Test("the signed bytes must carry decoded exactly what the verifier decoded")
    func decodedMembersAgree() throws {
        func row(renewalInfo: JWSRenewalInfoDecodedPayload?) throws(UnstorableNotification) -> NotificationRow {
            try NotificationRow(
                ordinal: 0,
                notification: .v2(
                    DecodedNotificationV2(
                        payload: ResponseBodyV2DecodedPayload(
                            notificationType: .test,
                            notificationUUID: UUID().uuidString
                        ),
                        renewalInfo: renewalInfo
                    )
                ),
                // The payload `{}`: no signed member.
                raw: RawNotification(
                    body: Array(#"{"signedPayload":"e30.e30.c2ln"}"#.utf8),
                    receivedAt: Date(),
                    source: KafkaTopicPartitionOffset(topic: "raw", partition: 0, offset: 2)
                )
            )
        }
        #expect(try row(renewalInfo: nil).decoded == #"{"payload":{}}"#)
        #expect(throws: UnstorableNotification.self) { try row(renewalInfo: JWSRenewalInfoDecodedPayload()) }
    }

    @Test("milliseconds before 1970 floor to the day that starts before them, as the server's months do")
    func daysBefore1970() {
        #expect(Int64(-1).flooredToDay == -86_400_000)
        #expect(Int64(-86_400_000).flooredToDay == -86_400_000)
        #expect(Int64(86_399_999).flooredToDay == 0)
        #expect(Int64(0).flooredToDay == 0)
    }
}

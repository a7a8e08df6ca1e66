import AppStoreModels
import AppStoreTestSupport
import Foundation
import KafkaClient
import NIOCore
import Testing

@testable import PipelineContract

@Suite("The output topics' messages and the raw topic's, as the contract names them", .tags(.fast))
struct OutputEventTests {
    static func headers(_ message: KafkaProducerMessage) -> [String] {
        message.headers.map { "\($0.key)=\($0.value.map { String(buffer: $0) } ?? "")" }
    }

    @Test("A decoded event: CloudEvents headers in binary content mode, keyed by the originalTransactionId")
    func decoded() throws {
        let uuid = try #require(UUID(uuidString: "0F2E4A8C-1B3D-4E5F-8A9B-0C1D2E3F4A5B"))
        let attributes = OutputEvent.DecodedAttributes(
            notificationUUID: uuid,
            version: 2,
            notificationType: "DID_RENEW",
            subtype: "BILLING_RECOVERY",
            signedDate: Date(timeIntervalSince1970: 1_790_000_000.125),
            environment: "Sandbox",
            bundleID: "com.example.notes",
            originalTransactionID: "2000000123"
        )
        let message = OutputEvent.decoded(
            attributes,
            json: #"{"a":1}"#,
            key: "2000000123",
            topic: PipelineTopics.decoded
        )
        #expect(message.topic == "appstore.notifications.decoded")
        #expect(message.key.map { String(buffer: $0) } == "2000000123")
        #expect(String(buffer: message.value) == #"{"a":1}"#)
        #expect(
            Self.headers(message) == [
                "ce_specversion=1.0", "ce_id=0f2e4a8c-1b3d-4e5f-8a9b-0c1d2e3f4a5b",
                "ce_type=com.apple.appstore.v2.DID_RENEW", "ce_source=appstore/com.example.notes/Sandbox",
                "ce_dataschema=urn:asnp:contract:decoded-v2:1", "ce_notificationversion=2",
                "content-type=application/json", "ce_time=2026-09-21T14:13:20.125Z", "ce_subject=2000000123",
                "ce_subtype=BILLING_RECOVERY",
            ]
        )
        let bare = OutputEvent.decoded(
            OutputEvent.DecodedAttributes(notificationUUID: uuid, version: 1, notificationType: "TEST"),
            json: "{}",
            key: nil,
            topic: PipelineTopics.decoded
        )
        #expect(bare.key == nil)
        #expect(Self.headers(bare).contains("ce_source=appstore/unknown/unknown"))
        #expect(Self.headers(bare).contains("ce_type=com.apple.appstore.v1.TEST"))
        #expect(Self.headers(bare).contains("ce_dataschema=urn:asnp:contract:decoded-v1:1"))
        #expect(!Self.headers(bare).contains { $0.hasPrefix("ce_time=") || $0.hasPrefix("ce_subject=") })
    }

    @Test("A state event: CloudEvents headers naming the subscription, keyed by its originalTransactionId")
    func subscriptionState() throws {
        let uuid = try #require(UUID(uuidString: "0F2E4A8C-1B3D-4E5F-8A9B-0C1D2E3F4A5B"))
        let message = OutputEvent.subscriptionState(
            OutputEvent.StateAttributes(
                originalTransactionID: "2000000123",
                lastNotificationUUID: uuid,
                lastSignedDate: Date(timeIntervalSince1970: 1_790_000_000.125),
                environment: "Sandbox",
                bundleID: "com.example.notes"
            ),
            json: #"{"a":1}"#,
            topic: PipelineTopics.subscriptionState
        )
        #expect(message.key.map { String(buffer: $0) } == "2000000123")
        #expect(String(buffer: message.value) == #"{"a":1}"#)
        #expect(
            Self.headers(message) == [
                "ce_specversion=1.0", "ce_id=0f2e4a8c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "ce_type=asnp.subscription.state",
                "ce_source=asnp/subscriptions/com.example.notes/Sandbox",
                "ce_dataschema=urn:asnp:contract:subscription-state:1", "content-type=application/json",
                "ce_time=2026-09-21T14:13:20.125Z", "ce_subject=2000000123",
            ]
        )
    }

    @Test("A dead letter: the consumed headers sorted, then why it was rejected and where it was read; JSON or bytes")
    func deadLetter() {
        func deadLetter(_ body: String) -> KafkaProducerMessage {
            OutputEvent.deadLetter(
                body: Array(body.utf8),
                status: "MALFORMED_BODY",
                reason: "the body is not JSON",
                receivedAt: Date(timeIntervalSince1970: 1_790_000_000),
                consumedHeaders: ["asnp-version": "2", "asnp-app": "notes"],
                source: KafkaTopicPartitionOffset(topic: PipelineTopics.raw, partition: 3, offset: 42),
                key: "k",
                topic: PipelineTopics.deadLetter
            )
        }
        let message = deadLetter("not json")
        #expect(message.topic == "appstore.notifications.dlq")
        #expect(String(buffer: message.value) == "not json")
        #expect(
            Self.headers(message) == [
                "asnp-app=notes", "asnp-version=2", "ce_specversion=1.0", "ce_id=appstore.notifications.raw/3/42",
                "ce_type=asnp.notification.rejected", "ce_source=asnp/appstore.notifications.raw",
                "ce_time=2026-09-21T14:13:20.000Z", "ce_rejectionstatus=MALFORMED_BODY",
                "ce_rejectionreason=the body is not JSON", "ce_sourcetopic=appstore.notifications.raw",
                "ce_sourcepartition=3", "ce_sourceoffset=42", "content-type=application/octet-stream",
            ]
        )
        for json in [#"{"signedPayload":"x"}"#, "[1]", #""text""#] {
            #expect(
                Self.headers(deadLetter(json)).suffix(2) == [
                    "ce_dataschema=urn:asnp:contract:dead-letter:1", "content-type=application/json",
                ]
            )
        }
        for notJSON in ["{", "\u{FEFF}{}", "{} {}"] {
            #expect(Self.headers(deadLetter(notJSON)).last == "content-type=application/octet-stream")
        }
    }

    @Test("A raw-topic message: the exact body, the raw headers, the peeked key; unkeyed only for non-objects")
    func rawMessage() {
        let headers = RawNotificationHeaders(
            version: 1,
            environment: .sandbox,
            app: "notes",
            receivedAt: Date(timeIntervalSince1970: 1_790_000_000),
            requestID: "r-1",
            source: .replay
        )
        let body = #"{"original_transaction_id":"1000000042","password":"x"}"#
        let message = headers.message(body: ByteBuffer(string: body), topic: PipelineTopics.raw)
        #expect(message.topic == "appstore.notifications.raw")
        #expect(message.key.map { String(buffer: $0) } == "1000000042")
        #expect(String(buffer: message.value) == body)
        #expect(
            Self.headers(message) == [
                "asnp-version=1", "asnp-environment=Sandbox", "asnp-app=notes",
                "asnp-received-at=2026-09-21T14:13:20.000Z", "asnp-request-id=r-1", "asnp-source=replay",
            ]
        )
        #expect(headers.message(body: ByteBuffer(string: "[1]"), topic: PipelineTopics.raw).key == nil)
    }
}

import AppStoreModels
import AppStoreTestSupport
import Foundation
import PipelineContract
import Testing

@Suite("The partition key peek and the raw-topic headers")
struct PartitionKeyTests {
    @Test("V2: the signed transaction's originalTransactionId, else the notificationUUID")
    func v2() throws {
        for fixture in Fixtures.v2Cases where fixture.expectedStatus == "OK" {
            let key = try #require(PartitionKey.peek(body: Data(fixture.body.utf8), version: 2), "\(fixture.id)")
            if case .string(let expected) = fixture.expect["originalTransactionId"] {
                #expect(key == PartitionKey(value: expected, basis: .originalTransactionId), "\(fixture.id)")
            } else if case .string(let uuid) = fixture.expect["notificationUUID"] {
                #expect(key == PartitionKey(value: uuid, basis: .notificationUUID), "\(fixture.id)")
            }
        }
    }

    @Test("V1: original_transaction_id from the top level or the receipt")
    func v1() throws {
        for fixture in Fixtures.v1Cases where fixture.expectedStatus == "OK" {
            guard case .string(let expected) = fixture.expect["originalTransactionId"] else { continue }
            let key = PartitionKey.peek(body: Data(fixture.body.utf8), version: 1)
            #expect(key == PartitionKey(value: expected, basis: .originalTransactionId), "\(fixture.id)")
        }
    }

    @Test(
        "Any JSON object gets a key (a body hash when nothing else), anything else none",
        arguments: [
            (#"{"hello": "world"}"#, true), (#"{"signedPayload": 12345}"#, true),
            (#"{"signedPayload": "a.b.c"}"#, true),
            (#"{"signedPayload": "@@@.###.$$$"}"#, true), ("[]", false), ("\"text\"", false), ("", false),
            ("{", false), ("not json", false), ("null", false),
        ]
    )
    func shapes(body: String, isObject: Bool) {
        for version in [1, 2] {
            let key = PartitionKey.peek(body: Data(body.utf8), version: version)
            #expect((key != nil) == isObject)
            if let key {
                #expect(key.basis == .bodyHash)
                #expect(key.value.hasPrefix("body-") && key.value.count == 37)
                #expect(key == PartitionKey.peek(body: Data(body.utf8), version: version), "stable")
            }
        }
    }

    @Test("Headers round-trip; a missing or invalid one is named")
    func headers() throws {
        let headers = RawNotificationHeaders(
            version: 2,
            environment: .sandbox,
            app: "notes",
            receivedAt: Date(timeIntervalSince1970: 1_795_000_000.5),
            requestID: "abc",
            source: .history
        )
        let fields = Dictionary(uniqueKeysWithValues: headers.fields.map { ($0.name, $0.value) })
        #expect(fields[RawNotificationHeaders.Name.receivedAt] == "2026-11-18T11:06:40.500Z")
        let read = try RawNotificationHeaders(fields: fields)
        #expect(read.version == 2 && read.environment == .sandbox && read.app == "notes" && read.source == .history)
        #expect(abs(read.receivedAt.timeIntervalSince(headers.receivedAt)) < 0.001)
        var missing = fields
        missing[RawNotificationHeaders.Name.app] = nil
        #expect(throws: RawNotificationHeadersError(header: "asnp-app")) { try RawNotificationHeaders(fields: missing) }
        var invalid = fields
        invalid[RawNotificationHeaders.Name.version] = "3"
        #expect(throws: RawNotificationHeadersError(header: "asnp-version", value: "3")) {
            try RawNotificationHeaders(fields: invalid)
        }
    }
}

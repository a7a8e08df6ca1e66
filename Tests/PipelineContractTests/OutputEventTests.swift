import AppStoreModels
import Foundation
import KafkaClient
import NIOCore
import Testing

@testable import PipelineContract

@Suite("The output topics' messages and the raw topic's, as the contract names them")
struct OutputEventTests {
    static func headers(_ message: KafkaProducerMessage) -> [String] {
        message.headers.map { "\($0.key)=\($0.value.map { String(buffer: $0) } ?? "")" }
    }

    @Test("A decoded event: CloudEvents headers in binary content mode, keyed by the originalTransactionId")
    func decoded() throws {
        let uuid = try #require(UUID(uuidString: "0F2E4A8C-1B3D-4E5F-8A9B-0C1D2E3F4A5B"))
        let attributes = OutputEvent.DecodedAttributes(
            notificationUUID: uuid,
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
                "ce_specversion=1.0", "ce_id=0f2e4a8c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "ce_type=DID_RENEW",
                "ce_source=appstore/com.example.notes/Sandbox", "content-type=application/json",
                "ce_time=2026-09-21T14:13:20.125Z", "ce_subject=2000000123", "ce_subtype=BILLING_RECOVERY",
            ]
        )
        let bare = OutputEvent.decoded(
            OutputEvent.DecodedAttributes(notificationUUID: uuid, notificationType: "TEST"),
            json: "{}",
            key: nil,
            topic: PipelineTopics.decoded
        )
        #expect(bare.key == nil)
        #expect(Self.headers(bare).contains("ce_source=appstore/unknown/unknown"))
        #expect(!Self.headers(bare).contains { $0.hasPrefix("ce_time=") || $0.hasPrefix("ce_subject=") })
    }

    @Test("A dead letter: the consumed headers sorted, then status, reason and where it was read")
    func deadLetter() {
        let message = OutputEvent.deadLetter(
            body: Array("not json".utf8),
            status: "MALFORMED",
            reason: "the body is not JSON",
            consumedHeaders: ["asnp-version": "2", "asnp-app": "notes"],
            source: KafkaTopicPartitionOffset(topic: PipelineTopics.raw, partition: 3, offset: 42),
            key: "k",
            topic: PipelineTopics.deadLetter
        )
        #expect(message.topic == "appstore.notifications.dlq")
        #expect(String(buffer: message.value) == "not json")
        #expect(
            Self.headers(message) == [
                "asnp-app=notes", "asnp-version=2", "asnp-status=MALFORMED", "asnp-reason=the body is not JSON",
                "asnp-source-topic=appstore.notifications.raw", "asnp-source-partition=3", "asnp-source-offset=42",
            ]
        )
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

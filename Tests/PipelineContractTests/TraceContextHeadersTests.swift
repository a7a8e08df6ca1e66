import AppStoreTestSupport
import Foundation
import KafkaClient
import NIOCore
import Testing

@testable import PipelineContract

@Suite("Trace context in Kafka headers: what the worker keeps, and how output events carry it", .tags(.fast))
struct TraceContextHeadersTests {
    static let valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    @Test(
        "A valid traceparent is kept with its tracestate; a malformed one, all-zero ids or version ff are no context",
        arguments: [
            ("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", false),
            ("00-00000000000000000000000000000000-b7ad6b7169203331-01", false),
            ("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", false),
            ("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false),
            ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra", false),
            ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01", false),
            ("", false),
            (valid, true),
        ]
    )
    func validation(_ traceparent: String, kept: Bool) {
        let context = TraceContextHeaders.context(in: ["traceparent": traceparent, "tracestate": "asnp=1"])
        #expect((context != nil) == kept)
        if kept {
            #expect(context?.traceparent == traceparent && context?.tracestate == "asnp=1")
        }
    }

    @Test("A later version is read as version 00 by its first 55 characters; an empty or oversized tracestate is none")
    func versionsAndState() {
        let later = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future"
        #expect(TraceContextHeaders.context(in: ["traceparent": later])?.traceparent == Self.valid)
        #expect(TraceContextHeaders.context(in: ["traceparent": Self.valid, "tracestate": ""])?.tracestate == nil)
        let oversized = String(repeating: "a", count: 32 * 257 + 1)
        #expect(
            TraceContextHeaders.context(in: ["traceparent": Self.valid, "tracestate": oversized])?.tracestate == nil
        )
        #expect(TraceContextHeaders.context(in: ["tracestate": "asnp=1"]) == nil)
    }

    @Test(
        "An output event in a trace carries it twice (W3C and CloudEvents); a dead letter's copied context is replaced"
    )
    func outputHeaders() {
        let trace = OutputEvent.Trace(traceparent: Self.valid, tracestate: "asnp=1")
        let event = OutputEvent.decoded(
            OutputEvent.DecodedAttributes(notificationUUID: .init(), version: 2, notificationType: "TEST"),
            json: "{}",
            key: "k",
            topic: "t",
            trace: trace
        )
        let headers = event.headers.map { ($0.key, $0.value.map { String(buffer: $0) }) }
        for name in ["traceparent", "ce_traceparent"] {
            #expect(headers.filter { $0.0 == name }.map(\.1) == [Self.valid])
        }
        for name in ["tracestate", "ce_tracestate"] {
            #expect(headers.filter { $0.0 == name }.map(\.1) == ["asnp=1"])
        }
        let letter = OutputEvent.deadLetter(
            body: Array("x".utf8),
            status: "MALFORMED_BODY",
            reason: "r",
            receivedAt: .init(timeIntervalSince1970: 0),
            consumedHeaders: ["traceparent": "garbage", "asnp-app": "notes"],
            source: KafkaTopicPartitionOffset(topic: "raw", partition: 0, offset: 1),
            key: nil,
            topic: "dlq",
            trace: OutputEvent.Trace(traceparent: Self.valid, tracestate: nil)
        )
        #expect(
            letter.headers.filter { $0.key == "traceparent" }.map { $0.value.map { String(buffer: $0) } } == [
                Self.valid
            ]
        )
        #expect(!letter.headers.contains { $0.key == "tracestate" || $0.key == "ce_tracestate" })
        let untraced = OutputEvent.subscriptionState(
            OutputEvent.StateAttributes(
                originalTransactionID: "1",
                lastNotificationUUID: .init(),
                lastSignedDate: .init(timeIntervalSince1970: 0),
                environment: nil,
                bundleID: nil
            ),
            json: "{}",
            topic: "s"
        )
        #expect(!untraced.headers.contains { $0.key.hasSuffix("traceparent") })
    }
}

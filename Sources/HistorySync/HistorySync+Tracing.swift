import AppStoreModels
import KafkaClient
import PipelineContract
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The reconciler's spans (nil when tracing is off): one per sync of an app and environment (a periodic turn, or a
// window), one per page of Apple's history beneath it. A page's notifications go to the raw topic in the page's trace
// (`traceparent`), so the worker's span of such a notification's batch continues or links it: a notification the
// reconciler fed says so in its trace (`asnp.source` = `history`).
extension HistorySync {
    /// The span of syncing `window`.
    func startSyncSpan(window: Range<Date>, periodic: Bool) -> (any Span)? {
        guard let tracer else { return nil }
        let span = tracer.startSpan("history sync", context: .topLevel, ofKind: .internal)
        span.attributes["asnp.source"] = "history"
        span.attributes["asnp.app"] = appName
        span.attributes["asnp.environment"] = environment.rawValue
        span.attributes["asnp.history.window"] = Self.text(window)
        span.attributes["asnp.history.periodic"] = periodic
        return span
    }

    /// The span of one page of `range`, a child of the sync's; a second look's pages say so.
    func startPageSpan(range: Range<Date>, secondLook: Bool, in sync: (any Span)?) -> (any Span)? {
        guard let tracer, let sync else { return nil }
        let span = tracer.startSpan("history page", context: sync.context, ofKind: .client)
        span.attributes["asnp.source"] = "history"
        span.attributes["asnp.history.range"] = Self.text(range)
        span.attributes["asnp.history.second_look"] = secondLook
        return span
    }

    /// Ends `span`, an error when `error` is given.
    static func end(_ span: (any Span)?, failing error: HistorySyncError? = nil) {
        guard let span else { return }
        if let error { span.setStatus(SpanStatus(code: .error, message: "\(error)")) }
        span.end()
    }

    /// `messages` in `span`'s trace: their `traceparent` (and `tracestate`) name it.
    func inject(_ span: (any Span)?, into messages: inout [KafkaProducerMessage]) {
        guard let tracer, let span else { return }
        for index in messages.indices {
            tracer.inject(span.context, into: &messages[index].headers, using: KafkaHeadersInjector())
        }
    }
}

/// A W3C Trace Context as the raw topic's headers carried it (`traceparent`, `tracestate`): the trace a consumed
/// notification belongs to. The outbox keeps it with each event, and the worker publishes the event in that trace.
package struct TraceContext: Sendable, Hashable {
    /// `00-<trace id>-<span id>-<flags>`.
    package var traceparent: String
    /// Vendors' state, carried along unchanged.
    package var tracestate: String?

    package init(traceparent: String, tracestate: String? = nil) {
        self.traceparent = traceparent
        self.tracestate = tracestate
    }

    /// The context of a `traceparent` column or header, if there is one.
    package init?(traceparent: String?, tracestate: String?) {
        guard let traceparent else { return nil }
        self.init(traceparent: traceparent, tracestate: tracestate)
    }

    /// The trace id: the 32 hex digits after the version.
    package var traceID: Substring {
        traceparent.dropFirst(3).prefix(32)
    }
}

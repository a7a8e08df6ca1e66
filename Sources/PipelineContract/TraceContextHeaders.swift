import Instrumentation
import KafkaClient

/// W3C Trace Context (`traceparent`, `tracestate`) in Kafka record headers: how a notification's trace travels from
/// the ingress's request span through the raw topic to the worker, and on to the output topics (CloudEvents'
/// distributed tracing extension uses the same two names). The values are the W3C header values as text.
package enum TraceContextHeaders {
    /// `traceparent`: version, trace id, parent span id and flags (`00-<32 hex>-<16 hex>-<2 hex>`).
    package static let traceparent = "traceparent"
    /// `tracestate`: vendors' state, carried along unchanged.
    package static let tracestate = "tracestate"
}

/// Writes a tracer's context into a Kafka message's headers (replacing a header of the same name).
package struct KafkaHeadersInjector: Injector {
    package init() {}

    package func inject(_ value: String, forKey key: String, into carrier: inout [KafkaHeader]) {
        carrier.removeAll { $0.key == key }
        carrier.append(KafkaHeader(key: key, string: value))
    }
}

/// Reads a tracer's context from a consumed Kafka message's headers (the first header of the name).
package struct KafkaHeadersExtractor: Extractor {
    package init() {}

    package func extract(key: String, from carrier: [KafkaHeader]) -> String? {
        carrier.first { $0.key == key }?.stringValue
    }
}

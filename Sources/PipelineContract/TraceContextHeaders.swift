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
    /// W3C's limit on `tracestate` (32 members of at most 256 characters, and commas): longer is not one.
    static let maximumTracestateLength = 32 * 257

    /// The `traceparent` and `tracestate` of `headers`, when `traceparent` is one as W3C Trace Context writes it
    /// (`00-<32 hex>-<16 hex>-<2 hex>`, lowercase, ids not all zero; a later version's longer value is read by its
    /// first 55 characters); `tracestate` only beside it and within W3C's length. Anything else is no context: a
    /// value nobody's tracer can continue is not kept.
    package static func context(in headers: [String: String]) -> (traceparent: String, tracestate: String?)? {
        guard let value = headers[traceparent], let parent = validTraceparent(value) else { return nil }
        let state = headers[tracestate].flatMap { $0.isEmpty || $0.utf8.count > maximumTracestateLength ? nil : $0 }
        return (parent, state)
    }

    /// `value` as a version-00 `traceparent`, or nil.
    static func validTraceparent(_ value: String) -> String? {
        let bytes = Array(value.utf8)
        guard bytes.count == 55 || (bytes.count > 55 && bytes[55] == UInt8(ascii: "-")) else { return nil }
        let fields = bytes[..<55].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard fields.map(\.count) == [2, 32, 16, 2] else { return nil }
        func isHex(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        }
        guard fields.allSatisfy({ $0.allSatisfy(isHex) }),
            !fields[0].elementsEqual("ff".utf8), bytes.count == 55 || !fields[0].elementsEqual("00".utf8),
            fields[1].contains(where: { $0 != UInt8(ascii: "0") }),
            fields[2].contains(where: { $0 != UInt8(ascii: "0") })
        else { return nil }
        // A later version's value is read as version 00 (W3C Trace Context, "Versioning of traceparent").
        return bytes.count == 55 ? value : "00" + String(decoding: bytes[2..<55], as: UTF8.self)
    }

    /// Kafka headers carrying a context: to extract it with ``KafkaHeadersExtractor``.
    package static func headers(traceparent: String, tracestate: String?) -> [KafkaHeader] {
        [KafkaHeader(key: Self.traceparent, string: traceparent)]
            + (tracestate.map { [KafkaHeader(key: Self.tracestate, string: $0)] } ?? [])
    }
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

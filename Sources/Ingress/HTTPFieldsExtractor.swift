import HTTPTypes
import Instrumentation

/// Reads a tracer's context (a sender's `traceparent`) from a request's header fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

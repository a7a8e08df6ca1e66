import HTTPTypes
import Instrumentation

/// Reads a tracer's context (a caller's `traceparent`) from a request's header fields: the ingress's and the read
/// API's server spans continue it.
package struct HTTPFieldsExtractor: Extractor {
    package init() {}

    package func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

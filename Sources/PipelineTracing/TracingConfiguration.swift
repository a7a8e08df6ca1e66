/// Where and how a role exports its spans: OpenTelemetry's OTLP over HTTP to a collector, a share of the traces
/// sampled. Off unless enabled; off, every span is a no-op and nothing is exported.
package struct TracingConfiguration: Sendable, Hashable {
    /// OTLP/HTTP's two encodings.
    package enum OTLPProtocol: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `http/protobuf`: the collectors' default.
        case httpProtobuf = "http/protobuf"
        /// `http/json`.
        case httpJSON = "http/json"

        package var description: String { rawValue }
    }

    /// Whether spans are exported at all.
    package var isEnabled = false
    /// The collector's traces URL (OTLP/HTTP's `/v1/traces`).
    package var endpoint = "http://localhost:4318/v1/traces"
    package var otlpProtocol = OTLPProtocol.httpProtobuf
    /// Headers sent with every export (a collector's API key): secrets, never logged.
    package var headers: [String: String] = [:]
    /// The share of new traces sampled, 0 to 1. A request whose `traceparent` says whether its caller sampled it
    /// follows the caller (parent-based), so a trace is never cut in half.
    package var samplingRatio = 0.01
    /// `service.name` on every span; each role names itself (`asnp-ingress`, `asnp-worker`, ...).
    package var serviceName: String
    /// The longest one export may take before it is given up (its spans are dropped; tracing never holds the
    /// pipeline back).
    package var exportTimeout: Duration = .seconds(10)
    /// How long finished spans wait to be exported together.
    package var exportDelay: Duration = .seconds(5)

    package init(serviceName: String) {
        self.serviceName = serviceName
    }
}

import PipelineTracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PipelineSettings {
    /// `tracing.*`: whether and where the role exports its spans; `serviceName` unless `tracing.serviceName` says.
    package func tracing(serviceName: String) throws -> TracingConfiguration {
        var configuration = TracingConfiguration(serviceName: try string("tracing.serviceName") ?? serviceName)
        configuration.isEnabled = try bool("tracing.enabled") ?? configuration.isEnabled
        if let endpoint = try string("tracing.endpoint") {
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme), url.host != nil else {
                throw SettingsError(
                    key: "tracing.endpoint",
                    reason: "is '\(endpoint)', not an http or https URL (the collector's /v1/traces)"
                )
            }
            configuration.endpoint = endpoint
        }
        if let name = try string("tracing.protocol") {
            guard let otlpProtocol = TracingConfiguration.OTLPProtocol(rawValue: name) else {
                let names = TracingConfiguration.OTLPProtocol.allCases.map(\.rawValue).joined(separator: ", ")
                throw SettingsError(key: "tracing.protocol", reason: "is '\(name)', not one of \(names)")
            }
            configuration.otlpProtocol = otlpProtocol
        }
        if let ratio = try double("tracing.samplingRatio") {
            guard (0...1).contains(ratio) else {
                throw SettingsError(key: "tracing.samplingRatio", reason: "is \(ratio), not between 0 and 1")
            }
            configuration.samplingRatio = ratio
        }
        configuration.headers = try nameValues(try secrets("tracing.headers"), key: "tracing.headers")
        configuration.exportTimeout = try duration("tracing.exportTimeoutSeconds") ?? configuration.exportTimeout
        return configuration
    }
}

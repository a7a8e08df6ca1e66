import Logging
import OTel
import ServiceLifecycle
import Tracing

/// A role's tracer and the service that exports what it records (swift-otel's batch processor and OTLP/HTTP
/// exporter). The tracer is handed to the role's parts rather than bootstrapped process-wide, so that one process
/// (`asnp dev`, a test) can run several roles, each naming itself.
package struct TracingBackend: Sendable {
    /// Starts the role's spans; nil when tracing is off, so that the parts skip even the no-op spans' cost.
    package let tracer: (any Tracer)?
    /// Exports the spans; run it in the role's service group before the services that record spans, so it stops
    /// (flushing what they recorded) after them. Nil when tracing is off.
    package let service: (any Service)?

    /// Adds `trace_id`, `span_id` and `trace_flags` of the span a line is logged in (the task's `ServiceContext`) to
    /// its metadata, so that logs and traces join; nothing outside a span, or with tracing off.
    package static let loggingMetadataProvider = OTel.makeLoggingMetadataProvider()

    /// Tracing off: no spans.
    package static let off = TracingBackend(tracer: nil, service: nil)

    private init(tracer: (any Tracer)?, service: (any Service)?) {
        self.tracer = tracer
        self.service = service
    }

    /// The backend `configuration` asks for. swift-otel also reads the standard `OTEL_` environment variables
    /// (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_TRACES_SAMPLER`, ...), which win over the configuration.
    package static func make(_ configuration: TracingConfiguration, logger: Logger) throws -> TracingBackend {
        guard configuration.isEnabled else { return .off }
        var otel = OTel.Configuration.default
        otel.serviceName = configuration.serviceName
        otel.diagnosticLogger = .custom(logger)
        otel.diagnosticLogLevel = .warning
        otel.propagators = [.traceContext]
        otel.metrics.enabled = false
        otel.logs.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        // Validated when the settings were read: 0 to 1.
        otel.traces.sampler = .parentBasedTraceIDRatio(ratio: configuration.samplingRatio) ?? .parentBasedAlwaysOn
        otel.traces.batchSpanProcessor.scheduleDelay = configuration.exportDelay
        otel.traces.batchSpanProcessor.exportTimeout = configuration.exportTimeout
        otel.traces.otlpExporter.endpoint = configuration.endpoint
        otel.traces.otlpExporter.protocol = configuration.otlpProtocol == .httpJSON ? .httpJSON : .httpProtobuf
        otel.traces.otlpExporter.headers = configuration.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        otel.traces.otlpExporter.timeout = configuration.exportTimeout
        let backend = try OTel.makeTracingBackend(configuration: otel)
        return TracingBackend(tracer: backend.factory, service: backend.service)
    }
}

import Foundation
import Logging
import PipelineServices
import PipelineTracing

/// `log.format` (`LOG_FORMAT`): `text` (swift-log's lines, the default) or `json` (``JSONLogHandler``), chosen once
/// before any command makes a logger.
enum LogFormat: String {
    case text
    case json

    /// Reads `log.format` from the environment, or from the file `--config` names, and installs the handler. An
    /// unknown format is a usage error (exit 2) rather than logs a pipeline cannot parse.
    static func bootstrap(arguments: [String] = CommandLine.arguments) async {
        let config = arguments.firstIndex(of: "--config").flatMap { index in
            index + 1 < arguments.count ? arguments[index + 1] : nil
        }
        let name = (try? await PipelineSettings.load(file: config).string("log.format")) ?? nil
        guard let name else { return }
        guard let format = LogFormat(rawValue: name) else {
            FileHandle.standardError.write(Data("Error: log.format (LOG_FORMAT) is '\(name)', not text or json\n".utf8))
            exit(2)
        }
        if format == .json {
            // Lines logged within a span carry its trace_id and span_id (tracing.enabled).
            LoggingSystem.bootstrap(
                { label, provider in
                    var handler = JSONLogHandler(label: label)
                    handler.metadataProvider = provider
                    return handler
                },
                metadataProvider: TracingBackend.loggingMetadataProvider
            )
        }
    }
}

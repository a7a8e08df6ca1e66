import CommandSupport
import Foundation
import Logging
import PipelineContract
import Synchronization

/// Logs as one JSON object per line on standard error (`log.format=json`, `LOG_FORMAT=json`), for log pipelines
/// that index fields: `time`, `level`, `logger`, `message`, then every metadata key (`kafka.partition`,
/// `kafka.offset`, `notification.uuid`, `original_transaction_id`, `request.id`, `error`, ...) as its own field.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// One write per line, so lines of concurrent tasks never interleave.
    private static let output = Mutex(FileHandle.standardError)

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        let line = Self.line(
            time: Date(),
            level: event.level,
            label: label,
            message: event.message.description,
            metadata: fields
        )
        Self.output.withLock { $0.write(Data((line + "\n").utf8)) }
    }

    /// The JSON object of one entry: the fixed fields first, then the metadata by key.
    static func line(
        time: Date,
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata
    ) -> String {
        var line = OrderedJSONObject()
        line.append("time", .string(RFC3339Timestamp.string(from: time)))
        line.append("level", .string(level.rawValue))
        line.append("logger", .string(label))
        line.append("message", .string(message))
        for (key, value) in metadata.sorted(by: { $0.key < $1.key })
        where !["time", "level", "logger", "message"].contains(key) {
            line.append(key, .raw(json(value)))
        }
        return line.serialized
    }

    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): OrderedJSONObject.quoted(string)
        case .stringConvertible(let value): OrderedJSONObject.quoted(value.description)
        case .array(let values): "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            "{"
                + dictionary.sorted { $0.key < $1.key }.map { "\(OrderedJSONObject.quoted($0.key)):\(json($0.value))" }
                .joined(separator: ",") + "}"
        }
    }
}

import Logging

/// A log handler that hands each event at `logLevel` and above, with the logger's metadata, to a closure: for tests
/// that keep what was logged in their own form.
public struct ClosureLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let handle: @Sendable (LogEvent, Logger.Metadata) -> Void

    public init(level: Logger.Level, _ handle: @escaping @Sendable (LogEvent, Logger.Metadata) -> Void) {
        logLevel = level
        self.handle = handle
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        handle(event, metadata)
    }
}

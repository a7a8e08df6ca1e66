import Logging
import Synchronization

/// What a logger logged, kept for a test to look for: each message with its metadata, one line each.
public final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }

    /// How many lines so far satisfy `predicate`.
    public func count(where predicate: (String) -> Bool) -> Int {
        lines.withLock { $0.count(where: predicate) }
    }

    /// A handler that keeps what is logged at `level` and above here.
    public func handler(level: Logger.Level) -> some LogHandler {
        ClosureLogHandler(level: level) { [self] event, metadata in
            let line = "\(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })"
            lines.withLock { $0.append(line) }
        }
    }
}

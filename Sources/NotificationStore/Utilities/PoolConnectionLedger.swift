import Logging
import Synchronization

/// The last thing known of each connection the pool has not closed: a pool that does not end after its shutdown can
/// then say which connections it still waits for, and in what state.
///
/// postgres-nio reports its connections' lives only through its background logger, at debug level (`Creating new
/// connection`, `Close connection`, `Connection closed`, a connection's own `Cleaning up and closing connection.`,
/// each with `psql_connection_id`; ``PoolLogHandler`` hands them here). It does not log a connection established
/// or leased: the store records its own leases and returns.
package final class PoolConnectionLedger: Sendable {
    private struct Entry {
        var event: String
        var at: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Records `message` as the connection's last event; `Connection closed` forgets it. With `ifOpen`, a connection
    /// already forgotten stays so (an operation's end may come after its connection was closed under it).
    func record(_ message: String, connection: String, ifOpen: Bool = false) {
        // The pool names its connections by the same number as `PostgresConnection.id`.
        entries.withLock { entries in
            if message == "Connection closed" {
                entries[connection] = nil
            } else if !ifOpen || entries[connection] != nil {
                entries[connection] = Entry(event: message, at: .now)
            }
        }
    }

    /// The connections not closed yet, each with its last event and how long ago it came, oldest first; "none" if
    /// there are none.
    package var openConnections: String {
        let now = ContinuousClock.now
        let open = entries.withLock { $0 }.sorted { $0.value.at < $1.value.at }
        guard !open.isEmpty else { return "none" }
        return open.map { id, entry in "\(id): \(entry.event) \((now - entry.at).components.seconds) s ago" }
            .joined(separator: "; ")
    }
}

/// The log handler of the pool's background logger: the store's own handler, which gets what it would anyway, and
/// the pool's connection events for the ``PoolConnectionLedger`` (at debug level, whatever the store's level).
struct PoolLogHandler: LogHandler {
    private var base: any LogHandler
    private let ledger: PoolConnectionLedger

    init(base: any LogHandler, ledger: PoolConnectionLedger) {
        self.base = base
        self.ledger = ledger
    }

    var logLevel: Logger.Level {
        get { min(base.logLevel, .debug) }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        // The pool's events carry the id themselves; a connection's own logger has it in the logger's metadata.
        if let connection = event.metadata?["psql_connection_id"] ?? base[metadataKey: "psql_connection_id"] {
            // A connection's life starts with this event; a late one of a connection already closed is not news.
            let message = event.message.description
            ledger.record(message, connection: "\(connection)", ifOpen: message != "Creating new connection")
        }
        if event.level >= base.logLevel { base.log(event: event) }
    }
}

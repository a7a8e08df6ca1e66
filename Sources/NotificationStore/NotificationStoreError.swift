import KafkaClient

/// A failure of the PostgreSQL store: the server unreachable, a conflict, a schema that is not ready, bad settings.
///
/// ``isRetriable`` is what the worker acts on: a retriable failure means "pause, back off, write the same batch
/// again, and do not commit Kafka offsets"; nothing was half-written, because every write is one transaction.
/// ``description`` never contains notification data or secrets; PostgreSQL's own words go to ``context``.
package struct NotificationStoreError: Error, Sendable, Hashable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, safe to log.
    package var reason: String
    /// PostgreSQL's SQLSTATE, when the server reported the failure (for example `40P01` for a deadlock).
    package var sqlState: String?
    /// Extra detail for debugging (the server's message, the client's error).
    package var context: String?
    /// The raw-topic partitions the failure concerns: for ``Code/partitionNotOwned``, those claimed by another
    /// worker since; for ``Code/storedOffsetBehind``, those the database holds through less than their writer
    /// expects (a transaction shared by several partitions' batches fails for all of them).
    package var partitions: [KafkaTopicPartition]

    /// Creates an error; keep notification data and secrets out of `reason`.
    package init(
        code: Code,
        reason: String,
        sqlState: String? = nil,
        context: String? = nil,
        partitions: [KafkaTopicPartition] = []
    ) {
        self.code = code
        self.reason = reason
        self.sqlState = sqlState
        self.context = context
        self.partitions = partitions
    }

    /// Whether the same operation may succeed later: the server back up, a conflicting transaction finished.
    package var isRetriable: Bool {
        switch code {
        case .unavailable, .timedOut, .conflict, .bodyPartitionMissing, .rolledBack: true
        default: false
        }
    }

    /// `CODE: reason (SQLSTATE x)`; safe to log.
    package var description: String {
        var text = "\(code.rawValue): \(reason)"
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        return text
    }

    /// The ``description`` followed by ``context`` in brackets, when there is one.
    package var debugDescription: String {
        guard let context else { return description }
        return "\(description) [\(context)]"
    }
}

extension NotificationStoreError {
    /// A store failure code.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `UNAVAILABLE`.
        package var description: String { rawValue }

        /// The server cannot be reached, refused the connection, closed it, or is shutting down or starting up.
        case unavailable = "UNAVAILABLE"
        /// The operation (including waiting for a connection) took longer than the configured timeout.
        case timedOut = "TIMED_OUT"
        /// A deadlock or serialization failure with a concurrent writer; the same transaction can simply run again.
        case conflict = "CONFLICT"
        /// The database schema is missing or older than this program needs: run `asnp migrate`.
        case schemaNotReady = "SCHEMA_NOT_READY"
        /// A migration failed, or an applied migration differs from the one this program carries.
        case migrationFailed = "MIGRATION_FAILED"
        /// The settings cannot be used (TLS settings postgres-nio refuses). A malformed database URL or an unknown
        /// `sslmode` is a ``PostgresRuntime/PostgresConfigurationError`` with the same code, thrown when the settings
        /// are parsed.
        case invalidConfiguration = "INVALID_CONFIGURATION"
        /// The server refused the credentials or the database does not exist.
        case authenticationFailed = "AUTHENTICATION_FAILED"
        /// The server rejected a statement for a reason that retrying cannot fix.
        case queryFailed = "QUERY_FAILED"
        /// No partition of `notification_bodies` holds a body's UTC month (not made yet, or dropped by retention
        /// meanwhile): never the row's fault. The store makes the month and writes again; retriable.
        case bodyPartitionMissing = "BODY_PARTITION_MISSING"
        /// The server rolled a transaction back at its COMMIT: one of its statements had failed, and that error
        /// never reached the store (a defect of ours; the reason and context say which operation). Nothing of it
        /// was written; running it again may succeed, and fails the same way if the statement keeps failing.
        case rolledBack = "ROLLED_BACK"
        /// The store was shut down.
        case shutDown = "SHUT_DOWN"
        /// A batch's partition was claimed by another worker since this one's claim (``NotificationStore/claim(_:)``):
        /// nothing of the batch was stored, and writing it again cannot help; the partition belongs to someone else
        /// (``NotificationStoreError/partitions`` names it).
        case partitionNotOwned = "PARTITION_NOT_OWNED"
        /// The database holds a batch's partition through an earlier offset than its writer knows was stored (its
        /// own last batch, or the group's committed offset it resumed from): the database was restored to an
        /// earlier point since, or lost what it held. Nothing of the batch was stored, and writing it as it is would
        /// skip what the database no longer holds: the writer rewinds to what the database holds (claiming the
        /// partition again tells it how far; ``PartitionClaim``). ``NotificationStoreError/partitions`` names the
        /// partitions.
        case storedOffsetBehind = "STORED_OFFSET_BEHIND"
    }
}

import Logging
import NotificationBodies
import NotificationStore
import PostgresNIO

/// What `asnp-bench store` measures the batch writer against: a plain COPY of the same staged rows into a bare table.
extension NotificationStore {
    /// Runs one SQL statement and returns the first column of each row, as text.
    func execute(_ sql: String) async throws(NotificationStoreError) -> [String] {
        let logger = self.logger
        return try await withConnection("running a benchmark statement") { connection in
            var values: [String] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                let cells = row.makeRandomAccess()
                values.append(cells.isEmpty ? "" : (try cells[0].decode(String?.self) ?? ""))
            }
            return values
        }
    }

    /// COPYs the batch's verified notifications, as the batch writer stages them, into `table` (which has the
    /// staged columns): the floor a batch writer is measured against. Returns the bytes of raw bodies and
    /// decoded JSON written.
    func copyPlain(_ batch: NotificationBatch, into table: String) async throws(NotificationStoreError) -> Int {
        let rows = PreparedBatch(batch).notifications
        let logger = self.logger
        try await withConnection("copying a benchmark batch") { connection in
            try await Self.copy(rows, into: table, on: connection, logger: logger)
        }
        return rows.reduce(0) { $0 + $1.body.bytes.count + $1.decoded.utf8.count }
    }

    /// COPYs rows in the staged columns' order into `table`, streaming in chunks so the server parses while we
    /// encode. The benchmark's alone: the store writes with UNNEST arrays (Docs/adr/0009-unnest-by-default.md). Outside
    /// a transaction of the store's, so no statement timeout applies; run with a long operation timeout:
    /// postgres-nio 1.33.2 stops the process when a connection is closed (a deadline) while COPY data is being sent.
    static func copy(
        _ rows: [NotificationRow],
        into table: String,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        // postgres-nio 1.33.2 drops a COPY written to a closed connection without failing it: copyFrom would wait
        // for ever.
        guard !connection.isClosed else {
            throw NotificationStoreError(
                code: .unavailable,
                reason: "COPY into \(table) not started: the connection to PostgreSQL is closed"
            )
        }
        try await connection.copyFrom(
            table: table,
            columns: BatchStatements.stagedColumns.map(\.name),
            logger: logger
        ) { writer in
            let chunkSize = 1 << 20
            var encoder = CopyTextEncoder(capacity: chunkSize + 64 * 1024)
            for row in rows {
                encoder.row(row)
                if encoder.buffer.readableBytes >= chunkSize {
                    try await writer.write(encoder.buffer)
                    encoder = CopyTextEncoder(capacity: chunkSize + 64 * 1024)
                }
            }
            if encoder.buffer.readableBytes > 0 {
                try await writer.write(encoder.buffer)
            }
        }
    }

    /// The statements creating a table `name` with the staged columns, for ``copyPlain(_:into:)``;
    /// `compression` is `lz4`, `pglz`, or `none` (stored uncompressed).
    static func bareTableDefinition(_ name: String, compression: String) -> [String] {
        let columns = BatchStatements.stagedColumns.map { "\($0.name) \($0.type)" }
        return ["CREATE TABLE \(name) (\(columns.joined(separator: ", ")))"]
            + largeColumnStorage(table: name, compression: compression)
    }

    /// The statements that give `notification_bodies`' columns (and its partitions') the compression `lz4`, `pglz`
    /// or `none`; compressed, they stay in the row (`MAIN`), as the schema has them.
    static func bodiesCompression(_ compression: String) -> [String] {
        ["decoded", "body"].flatMap { column in
            compression == "none"
                ? ["ALTER TABLE notification_bodies ALTER COLUMN \(column) SET STORAGE EXTERNAL"]
                : [
                    "ALTER TABLE notification_bodies ALTER COLUMN \(column) SET STORAGE MAIN",
                    "ALTER TABLE notification_bodies ALTER COLUMN \(column) SET COMPRESSION \(compression)",
                ]
        }
    }

    private static func largeColumnStorage(table: String, compression: String) -> [String] {
        ["decoded", "body"].flatMap { column in
            compression == "none"
                ? ["ALTER TABLE \(table) ALTER COLUMN \(column) SET STORAGE EXTERNAL"]
                : [
                    "ALTER TABLE \(table) ALTER COLUMN \(column) SET STORAGE EXTENDED",
                    "ALTER TABLE \(table) ALTER COLUMN \(column) SET COMPRESSION \(compression)",
                ]
        }
    }
}

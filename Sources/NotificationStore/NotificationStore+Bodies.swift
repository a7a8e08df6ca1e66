import Logging
import NotificationBodies
import NotificationSchema
import PostgresNIO
import PostgresRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// The bodies of one read, in order, rebuilt from their packed forms: the headers they refer to come from the
    /// cache or, once, from `jws_headers` on `connection` (and are cached, within its budget). A form that cannot be
    /// rebuilt (a header missing, a corrupt form) is a failure of its own, not of the read.
    func unpack(
        _ forms: [[UInt8]],
        on connection: PostgresConnection
    ) async throws -> [Result<[UInt8], PackedBodyError>] {
        var headers: [JWSHeaderDigest: [UInt8]] = [:]
        var wanted = Set<JWSHeaderDigest>()
        for form in forms {
            for digest in (try? PackedBody.referencedDigests(in: form)) ?? [] where headers[digest] == nil {
                if let header = headerCache[digest] {
                    headers[digest] = header
                } else {
                    wanted.insert(digest)
                }
            }
        }
        if !wanted.isEmpty {
            let digests = wanted.map { ByteBuffer(bytes: $0.bytes) }
            let rows = try await connection.query(
                "SELECT digest, header FROM jws_headers WHERE digest = ANY(\(digests))",
                logger: logger
            )
            for try await (digest, header) in rows.decode((ByteBuffer, String).self) {
                if let digest = JWSHeaderDigest(bytes: digest.readableBytesView) {
                    headers[digest] = Array(header.utf8)
                    headerCache[digest] = headers[digest]
                }
            }
        }
        return forms.map { form in
            Result { () throws(PackedBodyError) in try PackedBody.unpack(form, headers: { headers[$0] }) }
        }
    }
}

extension NotificationStore {
    /// Moves what notifications stored before schema 6 keep in `notifications` (`legacy_raw_body`, `legacy_decoded`) to
    /// `notification_bodies`, the body packed, `batchSize` rows a transaction in `notification_uuid` order, and
    /// returns how many it moved. Online: workers write meanwhile (they never touch these rows, and each batch holds
    /// its rows' locks for one short transaction); several movers share the work (`SKIP LOCKED`); an interrupted
    /// move resumes where rows still have a `legacy_raw_body`. `progress` is called after each batch with the total so far.
    @discardableResult
    package func moveBodies(
        batchSize: Int = 500,
        progress: @escaping @Sendable (_ moved: Int) -> Void = { _ in }
    ) async throws(NotificationStoreError) -> Int {
        var moved = 0
        var after = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let logger = self.logger
        while true {
            let start = after
            let batch = try await inTransaction("moving up to \(batchSize) bodies") { connection in
                let rows = try await connection.query(
                    """
                    SELECT notification_uuid, received_at, legacy_raw_body FROM notifications
                    WHERE notification_uuid > \(start) AND legacy_raw_body IS NOT NULL
                    ORDER BY notification_uuid LIMIT \(batchSize)
                    FOR UPDATE SKIP LOCKED
                    """,
                    logger: logger
                )
                var uuids: [UUID] = []
                var bodies: [PackedBody] = []
                var months = Set<Date>()
                for try await (uuid, receivedAt, body) in rows.decode((UUID, Date, String).self) {
                    uuids.append(uuid)
                    bodies.append(PackedBody(packing: Array(body.utf8)))
                    months.insert(BodyPartitionMonths.start(of: receivedAt, monthsBefore: 0))
                }
                guard let last = uuids.last else { return (count: 0, last: start) }
                var headers: [JWSHeaderDigest: [UInt8]] = [:]
                for body in bodies { headers.merge(body.headers) { first, _ in first } }
                try await Self.storeHeaders(headers, on: connection, logger: logger)
                // Old months, made here rather than ahead; the lock timeout keeps a long reader from holding the
                // workers behind this transaction's DDL.
                let lockTimeout = PostgresRuntime.setting(Self.partitionLockTimeout)
                try await connection.query("SELECT set_config('lock_timeout', \(lockTimeout), true)", logger: logger)
                // Read to the end: a statement's error arrives with its rows.
                for try await _ in try await connection.query(
                    "SELECT asnp_notification_bodies_partition(month) FROM unnest(\(months.sorted())) AS month",
                    logger: logger
                ) {}
                let forms = bodies.map { ByteBuffer(bytes: $0.bytes) }
                try await connection.query(
                    """
                    WITH moved AS (
                        INSERT INTO notification_bodies (notification_uuid, received_at, body, decoded)
                        SELECT n.notification_uuid, n.received_at, packed.body, n.legacy_decoded
                        FROM unnest(\(uuids)::uuid[], \(forms)::bytea[]) AS packed(notification_uuid, body)
                        JOIN notifications n USING (notification_uuid)
                        ORDER BY n.notification_uuid
                        ON CONFLICT (notification_uuid, received_at) DO NOTHING
                    )
                    UPDATE notifications SET legacy_raw_body = NULL, legacy_decoded = NULL
                    WHERE notification_uuid = ANY(\(uuids)::uuid[])
                    """,
                    logger: logger
                )
                return (count: uuids.count, last: last)
            }
            guard batch.count > 0 else { return moved }
            moved += batch.count
            after = batch.last
            progress(moved)
        }
    }
}

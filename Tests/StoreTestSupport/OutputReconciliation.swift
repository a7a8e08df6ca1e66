import Foundation
import LocalPostgres

/// The output side of a fault test's check, read back with an independent client (kcat) once the outbox is empty:
///
/// - the decoded topic holds exactly one distinct `ce_id` per stored notification (redeliveries may repeat one);
/// - the state topic's last value per key is that subscription's row, every column of it (`to_jsonb`);
/// - the dead-letter topic holds one distinct source coordinate (`ce_source*` attributes) per rejected row.
package struct OutputReconciliation: Sendable {
    /// What does not add up; empty when everything does.
    package private(set) var problems: [String] = []
    /// Events read per topic.
    package private(set) var decodedEvents = 0
    package private(set) var stateEvents = 0
    package private(set) var deadLetters = 0

    package static let decodedTopic = "appstore.notifications.decoded"
    package static let stateTopic = "appstore.subscriptions.state"
    package static let deadLetterTopic = "appstore.notifications.dlq"

    /// Waits (up to `timeout`) for the outbox to be empty, then reads the three output topics of the cluster at
    /// `bootstrapServers` to their ends and compares them with the tables `query` reads.
    /// - Parameter stateSince: per partition of the state topic, the first offset to read: the topic as if it had
    ///   been emptied up to there (to check that what was published since re-seeds it alone).
    package static func check(
        bootstrapServers: String,
        timeout: Duration = .seconds(120),
        stateSince: [Int: Int64] = [:],
        query: @Sendable (String) async throws -> String
    ) async throws -> OutputReconciliation {
        var result = OutputReconciliation()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var outbox = ""
        while ContinuousClock.now < deadline {
            outbox = (try? await query("SELECT count(*) FROM outbox WHERE refused_at IS NULL")) ?? "unreachable"
            if outbox == "0" { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        if outbox != "0" { result.problems.append("the outbox still holds \(outbox) rows to publish") }

        let decoded = try await read(decodedTopic, bootstrapServers: bootstrapServers)
        result.decodedEvents = decoded.count
        let ids = Set(decoded.compactMap { $0.headers["ce_id"] })
        let stored = Set(
            try await query("SELECT notification_uuid FROM notifications").split(separator: "\n").map(String.init)
        )
        if ids != stored {
            result.problems.append(
                "decoded topic: \(ids.subtracting(stored).count) ce_id(s) not stored, "
                    + "\(stored.subtracting(ids).count) stored notification(s) without an event "
                    + "(\(decoded.count) events, \(stored.count) notifications)"
            )
        }

        let states = try await read(stateTopic, bootstrapServers: bootstrapServers).filter {
            $0.offset >= stateSince[$0.partition, default: 0]
        }
        result.stateEvents = states.count
        // Values compared parsed (member order and spacing are not the contract), as the uuid and the whole row.
        func parsed(_ json: some StringProtocol) -> NSDictionary? {
            (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? NSDictionary
        }
        func version(_ row: NSDictionary?) -> String { row?["last_notification_uuid"] as? String ?? "unreadable" }
        var last: [String: NSDictionary?] = [:]
        for event in states {
            guard let key = event.key else { continue }
            last[key] = parsed(event.payload)
        }
        var rows: [String: NSDictionary?] = [:]
        // In UTC, as the store's sessions render the events' timestamps (the test servers run in another zone).
        let subscriptions = """
            SET TIME ZONE 'UTC'; SELECT original_transaction_id || ' ' || to_jsonb(s)::text FROM subscriptions s
            """
        for line in try await query(subscriptions).split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            rows[String(line[..<space])] = parsed(line[line.index(after: space)...])
        }
        let wrong = Set(last.keys).union(rows.keys).filter { key in
            guard let event = last[key], let row = rows[key], let event, let row else { return true }
            return event != row
        }
        if !wrong.isEmpty {
            result.problems.append(
                "state topic: the last event of \(wrong.count) subscription(s) is not its row, e.g. "
                    + wrong.sorted().prefix(3).map {
                        "\($0) has \(last[$0].map { version($0) } ?? "none"), row \(rows[$0].map { version($0) } ?? "none")"
                            + (version(last[$0] ?? nil) == version(rows[$0] ?? nil)
                                ? " (same notification, other values: \(String(describing: last[$0] ?? nil)) vs "
                                    + "\(String(describing: rows[$0] ?? nil)))" : "")
                    }
                    .joined(separator: "; ")
            )
        }

        let letters = try await read(deadLetterTopic, bootstrapServers: bootstrapServers)
        result.deadLetters = letters.count
        let sources = Set(
            letters.map {
                [
                    $0.headers["ce_sourcetopic"], $0.headers["ce_sourcepartition"],
                    $0.headers["ce_sourceoffset"],
                ]
                .map { $0 ?? "?" }.joined(separator: "/")
            }
        )
        let rejected = Set(
            try await query(
                "SELECT kafka_topic || '/' || kafka_partition || '/' || kafka_offset FROM rejected_notifications"
            ).split(separator: "\n").map(String.init)
        )
        if sources != rejected {
            result.problems.append(
                "dead-letter topic: \(sources.subtracting(rejected).count) letter(s) for no rejected row, "
                    + "\(rejected.subtracting(sources).count) rejected row(s) without a letter"
            )
        }
        return result
    }

    /// Reconciles with database `database` of the PostgreSQL server at 127.0.0.1:`port`.
    package static func check(
        bootstrapServers: String,
        port: Int,
        database: String
    ) async throws -> OutputReconciliation {
        let server = LocalPostgresServer(directory: "", port: port)
        return try await check(bootstrapServers: bootstrapServers) { sql in
            try await LocalPostgresServer.offPool { try server.psql(database, sql) }
        }
    }

    struct Event {
        var key: String?
        var payload: String
        var headers: [String: String]
        var partition: Int
        var offset: Int64
    }

    /// Per partition of `topic`, the offset its next message will have (partitions without messages left out).
    package static func endOffsets(_ topic: String, bootstrapServers: String) async throws -> [Int: Int64] {
        var ends: [Int: Int64] = [:]
        for event in try await read(topic, bootstrapServers: bootstrapServers) {
            ends[event.partition] = max(ends[event.partition] ?? 0, event.offset + 1)
        }
        return ends
    }

    /// Every message of `topic` from the start to its end, as kcat prints it (`-J`).
    static func read(_ topic: String, bootstrapServers: String) async throws -> [Event] {
        // posix_spawn, not Foundation's Process: its run() was seen to crash the test process on an EINTR.
        let output = try await LocalPostgresServer.offPool {
            try LocalPostgresServer.run(
                "/usr/bin/kcat",
                ["-C", "-b", bootstrapServers, "-t", topic, "-o", "beginning", "-e", "-J", "-q"]
            )
        }
        return output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            var headers: [String: String] = [:]
            let list = object["headers"] as? [String] ?? []
            for index in stride(from: 0, to: list.count - 1, by: 2) { headers[list[index]] = list[index + 1] }
            return Event(
                key: object["key"] as? String,
                payload: object["payload"] as? String ?? "",
                headers: headers,
                partition: object["partition"] as? Int ?? -1,
                offset: (object["offset"] as? NSNumber)?.int64Value ?? -1
            )
        }
    }
}

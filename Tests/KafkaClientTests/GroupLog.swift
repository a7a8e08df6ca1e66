import AppStoreTestSupport
import Logging
import Synchronization

/// The last few hundred lines librdkafka logged about a consumer group, from the members (`cgrp` debug) and the
/// mock's coordinator (`mock` debug), each with its time and its logger's `member` ("mock" for the coordinator): for
/// the message of a failed expectation about the group. What a member owns says that a group did not settle; only
/// the protocol exchange says why (a member that did not rejoin, a sync that timed out, a leader that never
/// answered), and a flake does not come back on demand.
final class GroupLog: Sendable {
    private let capacity: Int
    private let started = ContinuousClock.now
    private let lines = Mutex<[String]>([])

    init(capacity: Int = 400) {
        self.capacity = capacity
    }

    /// The last `count` lines kept, oldest first, one per line.
    func tail(_ count: Int = 150) -> String {
        let kept = lines.withLock { $0.suffix(count) }
        return kept.isEmpty ? "(no group log)" : kept.joined(separator: "\n")
    }

    /// A handler that keeps the group's lines here (whatever the level) and prints what `printLevel` lets through.
    func handler(label: String, printLevel: Logger.Level) -> some LogHandler {
        var printer = StreamLogHandler.standardError(label: label)
        printer.logLevel = printLevel
        return MultiplexLogHandler([recorder, printer])
    }

    private func record(_ text: String, member: String?) {
        let seconds = (ContinuousClock.now - started).seconds
        let line = "\((seconds * 100).rounded() / 100) s \(member ?? "other client"): \(text)"
        lines.withLock { lines in
            lines.append(line)
            if lines.count > capacity { lines.removeFirst(lines.count - capacity) }
        }
    }

    /// librdkafka's lines about the group, but not those repeated per heartbeat, per partition or per assignment
    /// query, which would crowd the exchange out.
    static func isAboutTheGroup(_ text: String) -> Bool {
        guard text.contains("roup") || text.contains("ssign") || text.contains("evok") else { return false }
        return !noise.contains { text.contains($0) }
    }

    private static let noise = [
        "Heartbeat for group", "as active", "Received HeartbeatRequest", "Sending HeartbeatResponse",
        "op GET_ASSIGNMENT", "Assignment dump", "op PARTITION_JOIN", "op PARTITION_LEAVE", "\": add ",
        "\": delete ", "committed offset", "committing offset", "Querying committed offset",
    ]

    private var recorder: ClosureLogHandler {
        ClosureLogHandler(level: .debug) { [self] event, metadata in
            let text = "\(event.message)"
            guard Self.isAboutTheGroup(text) else { return }
            record(text, member: (event.metadata?["member"] ?? metadata["member"]).map { "\($0)" })
        }
    }
}

import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NIOCore
import PipelineContract
import Synchronization

/// What the output topics held, read while `asnp-bench soak` runs and once more at its end, outside any consumer
/// group: librdkafka's mock keeps only ~5 MB a partition and deletes older messages silently, more than a long soak
/// publishes, so each partition is read from where the last read stopped. Keeps the little the checks need: per
/// decoded partition the events' keys and `ce_id`s in offset order, the state topic's last value per key, the dead
/// letters' `ce_id`s, and the offsets the mock deleted before they were read.
final class SoakOutputLog: Sendable {
    typealias Event = SoakOutputContents.Event
    typealias Contents = SoakOutputContents

    private let reader: KafkaPartitionReader
    private let admin: KafkaAdminClient
    private let state = Mutex(Contents())

    init(cluster: KafkaClusterConfiguration, logger: Logger) throws {
        reader = try KafkaPartitionReader(cluster: cluster, logger: logger)
        admin = try KafkaAdminClient(cluster: cluster, logger: logger)
    }

    /// What was read so far.
    var contents: Contents { state.withLock { $0 } }

    /// Reads every output partition from where the last read stopped to its end. Throws when a broker does not
    /// answer (an output broker down): the next call goes on from the same place. Not to be called concurrently.
    func catchUp() async throws {
        for topic in PipelineTopics.outputs {
            for (partition, marks) in try await admin.watermarks(of: topic).sorted(by: { $0.key < $1.key }) {
                let from = state.withLock { contents in
                    let next = contents.next[partition, default: 0]
                    guard marks.low > next else { return next }
                    contents.unread.append("\(partition) \(next)..<\(marks.low)")
                    return marks.low
                }
                guard marks.high > from else { continue }
                try await reader.read(partition, offsets: from..<marks.high, timeout: .seconds(10)) { messages in
                    state.withLock { contents in
                        for message in messages { Self.record(message, in: &contents) }
                        if let last = messages.last { contents.next[partition] = last.offset + 1 }
                    }
                }
            }
        }
    }

    private static func record(_ message: KafkaMessage, in contents: inout Contents) {
        let key = message.key.map { String(buffer: $0) } ?? ""
        let id = message.headers.first(named: "ce_id") ?? ""
        switch message.topic {
        case PipelineTopics.decoded:
            contents.decoded[message.partition, default: []].append(Event(key: key, id: id))
        case PipelineTopics.subscriptionState:
            contents.stateEvents += 1
            contents.lastState[key] = String(buffer: message.value)
        default:
            contents.deadLetters.append(id)
        }
    }
}

import KafkaClient
import Logging

extension StatusReport {
    /// The worker group's lag on the raw topic, or why it could not be read.
    package struct KafkaStatus: Encodable {
        package var group: String
        package var topic: String
        package var lag: Int64?
        package var lagByPartition: [String: Int64]?
        package var error: String?

        package init(group: String, topic: String) {
            self.group = group
            self.topic = topic
        }

        /// The lag of `group` on `topic`; a failure to read it is reported in ``error``, not thrown, so the
        /// store's counts are printed even when Kafka does not answer.
        package static func read(
            cluster: KafkaClusterConfiguration,
            group: String,
            topic: String,
            logger: Logger
        ) async -> KafkaStatus {
            var status = KafkaStatus(group: group, topic: topic)
            do {
                let admin = try KafkaAdminClient(cluster: cluster, logger: logger)
                let lags = try await admin.consumerLag(group: group, topic: topic, timeout: .seconds(10))
                status.lag = lags.map(\.lag).reduce(0, +)
                status.lagByPartition = Dictionary(
                    uniqueKeysWithValues: lags.map { (String($0.topicPartition.partition), $0.lag) }
                )
            } catch {
                status.error = "\(error)"
            }
            return status
        }
    }
}

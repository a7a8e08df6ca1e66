import CRDKafka
import Logging

extension KafkaConsumer {
    /// The rebalance callback's work: record what librdkafka announced; while closing, also apply it at once.
    ///
    /// Runs inside a batch poll or `rd_kafka_consumer_close`, on the consumer's executor thread.
    static func rebalanceHandler(
        state: Locked<StateMachine>,
        logger: Logger
    ) -> RDKafkaCallbacks.RebalanceHandler {
        { handle, code, list in
            let partitions = list.map { RDKafkaTopicPartitionList.partitions(of: $0) } ?? []
            let rebalance: StateMachine.Rebalance
            switch code {
            case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
                rebalance = .assign(partitions)
            case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
                rebalance = .revoke(partitions, isLost: rd_kafka_assignment_lost(handle) != 0)
            default:
                // librdkafka's documented answer to a failed rebalance: drop the assignment; the group recovers.
                logger.error(
                    "Kafka consumer rebalance failed; dropping the assignment",
                    metadata: ["rdkafka.error": "\(String(cString: rd_kafka_err2name(code)))"]
                )
                rebalance = .revoke(partitions, isLost: true)
            }
            logger.debug("Kafka consumer rebalance announced", metadata: ["kafka.rebalance": "\(rebalance)"])
            if state.withLock({ $0.rebalanceAnnounced(rebalance) }) == .applyNow,
                let error = apply(rebalance, on: handle)
            {
                logger.error("Kafka consumer could not apply a rebalance while closing: \(error)")
            }
        }
    }

    /// Makes librdkafka's assignment follow a rebalance, with the calls its rebalance protocol requires.
    static func apply(_ rebalance: StateMachine.Rebalance, on handle: OpaquePointer) -> KafkaError? {
        // NULL once the group is gone (after close).
        let isCooperative = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) } == "COOPERATIVE"
        switch rebalance {
        case .assign(let partitions):
            return RDKafkaTopicPartitionList.with(partitions) { list in
                if isCooperative {
                    return rd_kafka_incremental_assign(handle, list).map {
                        KafkaError.rdKafka(consuming: $0, "librdkafka refused the partitions the group assigned")
                    }
                }
                let result = rd_kafka_assign(handle, list)
                return result == RD_KAFKA_RESP_ERR_NO_ERROR
                    ? nil : KafkaError.rdKafka(result, "librdkafka refused the partitions the group assigned")
            }
        case .revoke(let partitions, _):
            if isCooperative {
                return RDKafkaTopicPartitionList.with(partitions) { list in
                    rd_kafka_incremental_unassign(handle, list).map {
                        KafkaError.rdKafka(consuming: $0, "librdkafka refused to give up the revoked partitions")
                    }
                }
            }
            // Eager: a revocation always covers the whole assignment.
            let result = rd_kafka_assign(handle, nil)
            return result == RD_KAFKA_RESP_ERR_NO_ERROR
                ? nil : KafkaError.rdKafka(result, "librdkafka refused to give up the revoked partitions")
        }
    }
}

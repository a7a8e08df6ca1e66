import CRDKafka
import Logging

extension KafkaConsumer {
    /// The rebalance callback's work: record what librdkafka announced; while closing, also apply it at once.
    ///
    /// Runs inside a batch poll or `rd_kafka_consumer_close`, on the consumer's executor thread.
    static func rebalanceHandler(
        state: Locked<StateMachine>,
        isCooperative: Bool,
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
                let error = apply(rebalance, on: handle, isCooperative: isCooperative)
            {
                logger.error("Kafka consumer could not apply a rebalance while closing: \(error)")
            }
        }
    }

    /// Makes librdkafka's assignment follow a rebalance, with the calls its rebalance protocol requires.
    ///
    /// The protocol is the configured one (the only strategy the member offers), not `rd_kafka_rebalance_protocol`:
    /// that call waits for librdkafka's group thread, which inside `rd_kafka_consumer_close`'s rebalance callback
    /// can wait for us, and a test run hung there for good.
    static func apply(
        _ rebalance: StateMachine.Rebalance,
        on handle: OpaquePointer,
        isCooperative: Bool
    ) -> KafkaError? {
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

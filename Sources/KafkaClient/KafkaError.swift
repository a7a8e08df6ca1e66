import CRDKafka

/// A failure of the Kafka layer: invalid settings, a message the cluster did not acknowledge, a closed client.
///
/// ``code`` is this module's vocabulary; ``rdKafkaError`` keeps librdkafka's own error name (for example
/// `_MSG_TIMED_OUT` or `NOT_ENOUGH_REPLICAS`) when librdkafka reported it. ``description`` never contains message
/// payloads or secrets, so it is safe to log.
package struct KafkaError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, safe to log.
    package var reason: String
    /// librdkafka's error name (`rd_kafka_err2name`), when the failure came from librdkafka.
    package var rdKafkaError: String?
    /// Extra detail for debugging (for example librdkafka's own error string).
    package var context: String?

    /// Creates an error; keep payloads and secrets out of `reason`.
    package init(code: Code, reason: String, rdKafkaError: String? = nil, context: String? = nil) {
        self.code = code
        self.reason = reason
        self.rdKafkaError = rdKafkaError
        self.context = context
    }

    /// Whether the same operation may succeed later (a broker back up, a leader elected, a queue drained). The
    /// ingress answers 503 to such failures so Apple retries; configuration errors and closed clients are final.
    package var isRetriable: Bool {
        switch code {
        case .messageTimedOut, .brokerError, .timedOut, .queueFull: true
        default: false
        }
    }

    /// `CODE: reason (librdkafka error name)`; safe to log, never contains payloads or secrets.
    package var description: String {
        var text = "\(code.rawValue): \(reason)"
        if let rdKafkaError { text += " (\(rdKafkaError))" }
        return text
    }

    /// The ``description`` followed by ``context`` in brackets, when there is one.
    package var debugDescription: String {
        guard let context else { return description }
        return "\(description) [\(context)]"
    }
}

extension KafkaError {
    /// A Kafka-layer failure code.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `MESSAGE_TIMED_OUT`.
        package var description: String { rawValue }

        /// A setting is missing, malformed, unknown to librdkafka, or one this layer manages itself.
        case invalidConfiguration = "INVALID_CONFIGURATION"
        /// The cluster did not acknowledge a message within the delivery timeout (`message.timeout.ms`).
        case messageTimedOut = "MESSAGE_TIMED_OUT"
        /// The cluster could not serve a message or request now (no leader, not enough replicas, a coordinator
        /// moving; see ``KafkaError/rdKafkaError``); the same request may succeed later.
        case brokerError = "BROKER_ERROR"
        /// The cluster refused a message or request for good: too large, not authorised, malformed, or an API the
        /// broker does not support (see ``KafkaError/rdKafkaError``). Retrying the same request cannot help.
        case refused = "REFUSED"
        /// The consumer group rebalanced: this member's generation ended, so the partitions it committed for may
        /// belong to another member now. The commit was not applied.
        case rebalanced = "REBALANCED"
        /// A request (commit, metadata, admin) did not complete in time.
        case timedOut = "TIMED_OUT"
        /// The local producer queue stayed full for longer than the caller was willing to wait.
        case queueFull = "QUEUE_FULL"
        /// The client was shut down; the message was not (or not knowingly) acknowledged.
        case shutDown = "SHUT_DOWN"
        /// librdkafka raised a fatal error (for example an idempotence guarantee that can no longer be kept); the
        /// client must be recreated.
        case fatal = "FATAL"
        /// The consumer, or a partition it asked about, is not in a state for this call.
        case invalidState = "INVALID_STATE"
        /// The mock cluster refused an operation.
        case mockCluster = "MOCK_CLUSTER"
    }
}

extension KafkaError {
    /// Wraps a librdkafka error code, choosing this module's code from it.
    static func rdKafka(_ error: rd_kafka_resp_err_t, _ reason: String) -> KafkaError {
        let code: Code
        switch error {
        case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT: code = .messageTimedOut
        case RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT: code = .timedOut
        case RD_KAFKA_RESP_ERR__QUEUE_FULL: code = .queueFull
        case RD_KAFKA_RESP_ERR__PURGE_QUEUE, RD_KAFKA_RESP_ERR__PURGE_INFLIGHT, RD_KAFKA_RESP_ERR__DESTROY:
            code = .shutDown
        case RD_KAFKA_RESP_ERR__FATAL: code = .fatal
        case RD_KAFKA_RESP_ERR__STATE, RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, RD_KAFKA_RESP_ERR__INVALID_ARG:
            code = .invalidState
        case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID,
            RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
            RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST:
            code = .rebalanced
        case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE,
            RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE, RD_KAFKA_RESP_ERR_INVALID_RECORD,
            RD_KAFKA_RESP_ERR_INVALID_MSG, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
            RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED,
            RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED, RD_KAFKA_RESP_ERR__AUTHENTICATION,
            RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION, RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE,
            RD_KAFKA_RESP_ERR_INVALID_REQUEST, RD_KAFKA_RESP_ERR_INVALID_PARTITIONS,
            RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION,
            RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
            code = .refused
        default: code = .brokerError
        }
        return KafkaError(
            code: code,
            reason: reason,
            rdKafkaError: String(cString: rd_kafka_err2name(error)),
            context: String(cString: rd_kafka_err2str(error))
        )
    }

    /// Wraps (and destroys) a librdkafka error object.
    static func rdKafka(consuming error: OpaquePointer, _ reason: String) -> KafkaError {
        defer { rd_kafka_error_destroy(error) }
        return rdKafka(copying: error, reason)
    }

    /// Wraps a librdkafka error object owned by someone else (an admin result).
    static func rdKafka(copying error: OpaquePointer, _ reason: String) -> KafkaError {
        var wrapped = KafkaError.rdKafka(rd_kafka_error_code(error), reason)
        if rd_kafka_error_is_fatal(error) != 0 { wrapped.code = .fatal }
        if let text = rd_kafka_error_string(error) { wrapped.context = String(cString: text) }
        return wrapped
    }

    static func invalidConfiguration(_ reason: String, context: String? = nil) -> KafkaError {
        KafkaError(code: .invalidConfiguration, reason: reason, context: context)
    }

    static func shutDown(_ reason: String) -> KafkaError {
        KafkaError(code: .shutDown, reason: reason)
    }
}

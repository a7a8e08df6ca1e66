import CRDKafka
import Logging

/// What librdkafka's C callbacks reach: a logger and the handlers of the client that owns the handle.
///
/// C callbacks cannot capture Swift context; librdkafka hands back the configuration's opaque pointer, which is this
/// object (kept alive by ``RDKafkaClient`` until the handle is destroyed). Handlers are fixed at creation, so the
/// object is immutable and `Sendable`. They run on librdkafka's threads or on the thread that serves a queue, and
/// only record and return (the rebalance handler may also (un)assign, which librdkafka expects there).
final class RDKafkaCallbacks: Sendable {
    /// A produced message's delivery report: its opaque id, error code, partition and offset.
    typealias DeliveryReportHandler = @Sendable (UInt, rd_kafka_resp_err_t, Int32, Int64) -> Void
    /// A consumer-group rebalance: the handle, the event code and the partitions (valid only during the call).
    typealias RebalanceHandler =
        @Sendable (OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) -> Void
    /// An offset commit's result: the commit's opaque id, the request error and the per-partition results.
    typealias CommitHandler =
        @Sendable (UInt, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) -> Void
    /// A client-level error librdkafka reported (most it recovers from by itself; `_FATAL` it cannot).
    typealias ErrorHandler = @Sendable (rd_kafka_resp_err_t, String) -> Void
    /// A statistics report (`statistics.interval.ms`): librdkafka's JSON, valid only during the call.
    typealias StatisticsHandler = @Sendable (UnsafeRawBufferPointer) -> Void

    let logger: Logger
    /// Fetches the handle's `OAUTHBEARER` tokens, when the cluster configuration has OAuth client credentials.
    let oauthBearer: RDKafkaOAuthBearer?
    let deliveryReport: DeliveryReportHandler?
    let rebalance: RebalanceHandler?
    let commit: CommitHandler?
    let error: ErrorHandler?
    let statistics: StatisticsHandler?

    /// `oauth` has no default: every client made from a cluster configuration passes the configuration's
    /// (``KafkaClusterConfiguration``'s `oauth`), so none connects without its tokens.
    init(
        logger: Logger,
        oauth: KafkaOAuthClientCredentials?,
        deliveryReport: DeliveryReportHandler? = nil,
        rebalance: RebalanceHandler? = nil,
        commit: CommitHandler? = nil,
        error: ErrorHandler? = nil,
        statistics: StatisticsHandler? = nil
    ) {
        self.logger = logger
        oauthBearer = oauth.map { RDKafkaOAuthBearer(tokens: OAuthTokenClient(credentials: $0), logger: logger) }
        self.deliveryReport = deliveryReport
        self.rebalance = rebalance
        self.commit = commit
        self.error = error
        self.statistics = statistics
    }

    static func from(_ opaque: UnsafeMutableRawPointer?) -> RDKafkaCallbacks? {
        opaque.map { Unmanaged<RDKafkaCallbacks>.fromOpaque($0).takeUnretainedValue() }
    }

    func install(on conf: OpaquePointer, opaque: UnsafeMutableRawPointer) {
        rd_kafka_conf_set_opaque(conf, opaque)
        rd_kafka_conf_set_log_cb(conf, rdKafkaLogCallback)
        rd_kafka_conf_set_error_cb(conf, rdKafkaErrorCallback)
        if deliveryReport != nil { rd_kafka_conf_set_dr_msg_cb(conf, rdKafkaDeliveryReportCallback) }
        if rebalance != nil { rd_kafka_conf_set_rebalance_cb(conf, rdKafkaRebalanceCallback) }
        if statistics != nil { rd_kafka_conf_set_stats_cb(conf, rdKafkaStatisticsCallback) }
        if oauthBearer != nil {
            rd_kafka_conf_set_oauthbearer_token_refresh_cb(conf, rdKafkaOAuthBearerRefreshCallback)
            // A queue of its own for the refresh, which RDKafkaClient hands to librdkafka's background thread.
            rd_kafka_conf_enable_sasl_queue(conf, 1)
        }
    }
}

// The C callbacks: find the context, hand over, return.

private let rdKafkaLogCallback:
    @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = {
        handle,
        level,
        facility,
        text in
        guard let handle, let callbacks = RDKafkaCallbacks.from(rd_kafka_opaque(handle)) else { return }
        // syslog levels: 0-3 error, 4 warning, 5-6 notice/info, 7 debug.
        let logLevel: Logger.Level =
            switch level {
            case ...3: .error
            case 4: .warning
            case 5, 6: .info
            default: .debug
            }
        guard callbacks.logger.logLevel <= logLevel else { return }
        callbacks.logger.log(
            level: logLevel,
            "librdkafka: \(text.map { String(cString: $0) } ?? "")",
            metadata: ["rdkafka.facility": "\(facility.map { String(cString: $0) } ?? "")"]
        )
    }

private let rdKafkaErrorCallback:
    @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = {
        _,
        code,
        reason,
        opaque in
        guard let callbacks = RDKafkaCallbacks.from(opaque) else { return }
        let error = rd_kafka_resp_err_t(code)
        let text = reason.map { String(cString: $0) } ?? ""
        // librdkafka recovers from most client-level errors by itself (reconnects, retries), and its log callback
        // already reported connection failures; a fatal error ends the client's guarantees.
        let level: Logger.Level =
            switch error {
            case RD_KAFKA_RESP_ERR__FATAL: .error
            case RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__RESOLVE: .debug
            default: .warning
            }
        callbacks.logger.log(
            level: level,
            "librdkafka error: \(text)",
            metadata: ["rdkafka.error": "\(String(cString: rd_kafka_err2name(error)))"]
        )
        callbacks.error?(error, text)
    }

private let rdKafkaDeliveryReportCallback:
    @convention(c) (OpaquePointer?, UnsafePointer<rd_kafka_message_t>?, UnsafeMutableRawPointer?) -> Void = {
        _,
        message,
        opaque in
        guard let message, let callbacks = RDKafkaCallbacks.from(opaque) else { return }
        let id = UInt(bitPattern: message.pointee._private)
        callbacks.deliveryReport?(id, message.pointee.err, message.pointee.partition, message.pointee.offset)
    }

private let rdKafkaStatisticsCallback:
    @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32 = {
        _,
        json,
        length,
        opaque in
        if let json, let callbacks = RDKafkaCallbacks.from(opaque) {
            callbacks.statistics?(UnsafeRawBufferPointer(start: json, count: length))
        }
        return 0  // librdkafka frees the JSON.
    }

private let rdKafkaRebalanceCallback:
    @convention(c) (
        OpaquePointer?, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
        UnsafeMutableRawPointer?
    ) -> Void = { handle, code, partitions, opaque in
        guard let handle, let callbacks = RDKafkaCallbacks.from(opaque) else { return }
        callbacks.rebalance?(handle, code, partitions)
    }

/// Passed to `rd_kafka_commit_queue` per commit; its opaque is the commit's id, the context comes from the handle.
let rdKafkaCommitCallback:
    @convention(c) (
        OpaquePointer?, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
        UnsafeMutableRawPointer?
    ) -> Void = { handle, code, partitions, commitOpaque in
        guard let handle, let callbacks = RDKafkaCallbacks.from(rd_kafka_opaque(handle)) else { return }
        callbacks.commit?(UInt(bitPattern: commitOpaque), code, partitions)
    }

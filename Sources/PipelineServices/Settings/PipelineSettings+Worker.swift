import AppStoreVerification
import KafkaClient
import NotificationStore
import PipelineContract
import PipelineStatus
import PostgresRuntime
import Worker
import X509

extension PipelineSettings {
    /// `database.*`: the PostgreSQL store (`database.url` is `DATABASE_URL` in the environment); with `section`,
    /// the same settings under another name (`api.database.*`, the read API's replica).
    package func database(section: String = "database") throws -> NotificationStoreConfiguration {
        guard let url = try secret("\(section).url"), !url.isEmpty else {
            throw SettingsError(key: "\(section).url", reason: "is required: postgres://user@host:port/database")
        }
        var configuration: NotificationStoreConfiguration
        do {
            configuration = try NotificationStoreConfiguration(url: url)
        } catch {
            throw SettingsError(key: "\(section).url", reason: "is invalid: \(error.reason)")
        }
        try applyTLSFiles(to: &configuration, section: section)
        configuration.maximumConnections = try int("\(section).maxConnections") ?? configuration.maximumConnections
        configuration.operationTimeout = try duration("\(section).timeoutSeconds") ?? configuration.operationTimeout
        configuration.usesPreparedStatements =
            try bool("\(section).preparedStatements") ?? configuration.usesPreparedStatements
        return configuration
    }

    /// `database.sslMode`, `database.sslRootCert`, `database.sslCert`, `database.sslKey`: libpq's TLS parameters
    /// as settings (they win over the URL's), for a URL kept in a secret that names none; the files are read now.
    private func applyTLSFiles(to configuration: inout NotificationStoreConfiguration, section: String) throws {
        if let mode = try string("\(section).sslMode") {
            guard let tls = NotificationStoreConfiguration.TLSMode(sslmode: mode) else {
                throw SettingsError(
                    key: "\(section).sslMode",
                    reason: "is '\(mode)', not one of disable, prefer, require, verify-ca, verify-full"
                )
            }
            configuration.tls = tls
        }
        do {
            if let root = try string("\(section).sslRootCert") {
                configuration.rootCertificates =
                    root == "system" ? nil : try NotificationStoreConfiguration.RootCertificates(path: root)
            }
            let certificate = try string("\(section).sslCert")
            let key = try string("\(section).sslKey")
            if certificate != nil || key != nil {
                guard let certificate, let key else {
                    throw SettingsError(key: "\(section).sslCert", reason: "and \(section).sslKey go together")
                }
                configuration.clientCertificate = try NotificationStoreConfiguration.ClientCertificate(
                    certificatePath: certificate,
                    keyPath: key
                )
            }
        } catch let error as PostgresConfigurationError {
            throw SettingsError(key: section, reason: "has TLS files that cannot be used: \(error.reason)")
        }
    }

    /// `kafka.topics.raw`: where the ingress writes and the workers read.
    package func rawTopic() throws -> String {
        try string("kafka.topics.raw") ?? PipelineTopics.raw
    }

    /// `kafka.topics.decoded`, `kafka.topics.subscriptionState`, `kafka.topics.deadLetter`.
    package func outputTopics() throws -> OutputTopics {
        var topics = OutputTopics()
        topics.decoded = try string("kafka.topics.decoded") ?? topics.decoded
        topics.subscriptionState = try string("kafka.topics.subscriptionState") ?? topics.subscriptionState
        topics.deadLetter = try string("kafka.topics.deadLetter") ?? topics.deadLetter
        return topics
    }

    /// `worker.*` and `kafka.topics.*`.
    package func worker(cluster: KafkaClusterConfiguration) throws -> WorkerConfiguration {
        let consumer = KafkaConsumerConfiguration(
            cluster: cluster,
            groupID: try string("worker.groupId") ?? "asnp-workers",
            topics: [try rawTopic()]
        )
        var configuration = WorkerConfiguration(consumer: consumer)
        configuration.consumer.sessionTimeout =
            try duration("worker.sessionTimeoutSeconds") ?? configuration.consumer.sessionTimeout
        configuration.consumer.heartbeatInterval =
            try duration("worker.heartbeatIntervalSeconds") ?? configuration.consumer.heartbeatInterval
        guard configuration.consumer.heartbeatInterval < configuration.consumer.sessionTimeout else {
            throw SettingsError(key: "worker.heartbeatIntervalSeconds", reason: "must be less than the session timeout")
        }
        configuration.outputTopics = try outputTopics()
        configuration.maximumBatchSize = try int("worker.batchSize") ?? configuration.maximumBatchSize
        configuration.maximumWait = try duration("worker.maxWaitSeconds") ?? configuration.maximumWait
        configuration.verificationParallelism =
            try int("worker.parallelism") ?? configuration.verificationParallelism
        configuration.maximumConcurrentBatches =
            try int("worker.maxConcurrentBatches") ?? configuration.maximumConcurrentBatches
        configuration.maximumConcurrentWrites =
            try int("worker.maxConcurrentWrites") ?? configuration.maximumConcurrentWrites
        // 0: transactions as often as the database answers.
        configuration.transactionInterval =
            try duration("worker.transactionIntervalSeconds", allowsZero: true) ?? configuration.transactionInterval
        configuration.maximumConcurrentPublications =
            try int("worker.maxConcurrentPublications") ?? configuration.maximumConcurrentPublications
        configuration.outboxSweepInterval =
            try duration("worker.outboxSweepSeconds") ?? configuration.outboxSweepInterval
        configuration.metricsSampleInterval =
            try duration("worker.metricsSampleSeconds") ?? configuration.metricsSampleInterval
        configuration.storedOffsetCheckInterval =
            try duration("worker.storedOffsetCheckSeconds") ?? configuration.storedOffsetCheckInterval
        guard configuration.maximumBatchSize > 0, configuration.verificationParallelism > 0,
            configuration.maximumConcurrentBatches > 0, configuration.maximumConcurrentWrites > 0,
            configuration.maximumConcurrentPublications > 0,
            configuration.outboxSweepInterval > .zero, configuration.metricsSampleInterval > .zero,
            configuration.storedOffsetCheckInterval > .zero
        else {
            throw SettingsError(
                key: "worker",
                reason: "batchSize, parallelism, maxConcurrentBatches, maxConcurrentWrites, maxConcurrentPublications, "
                    + "outboxSweepSeconds, metricsSampleSeconds and storedOffsetCheckSeconds must be positive"
            )
        }
        return configuration
    }

    /// `worker.statusHost`, `worker.statusPort`: the probes and the Prometheus scrape.
    package func workerStatus() throws -> StatusServerConfiguration {
        try status(section: "worker")
    }

    /// `{section}.statusHost`, `{section}.statusPort`: where a service serves its probes and the Prometheus scrape
    /// (the ingress: apart from the notification routes).
    func status(section: String) throws -> StatusServerConfiguration {
        var configuration = StatusServerConfiguration()
        configuration.host = try string("\(section).statusHost") ?? configuration.host
        configuration.port = try int("\(section).statusPort") ?? configuration.port
        guard (0...65_535).contains(configuration.port) else {
            throw SettingsError(key: "\(section).statusPort", reason: "must be a port number (0 picks a free one)")
        }
        return configuration
    }

    /// `worker.rootCertificates`: trusted roots (DER or PEM files); Apple Root CA - G3 when not set.
    package func trustedRoots() throws -> [Certificate] {
        let paths = try stringArray("worker.rootCertificates") ?? []
        do {
            return try RootCertificateFile.trustedRoots(paths: paths)
        } catch {
            throw SettingsError(key: "worker.rootCertificates", reason: "\(error)")
        }
    }
}

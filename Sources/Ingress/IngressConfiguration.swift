import KafkaClient
import PipelineContract

/// Settings of the ingress; the defaults suit `asnp dev` and a production pod behind a load balancer alike.
package struct IngressConfiguration: Sendable {
    /// The address to listen on. Default `0.0.0.0` (every interface, as a container needs).
    package var host = "0.0.0.0"
    /// The TCP port. Default 8080; 0 picks a free one (tests).
    package var port = 8080
    /// The apps served; the route's `{app}` segment names one. With exactly one app the segment may be left out.
    package var apps: [PipelineApp]
    /// The topic raw bodies go to. Default `appstore.notifications.raw`.
    package var rawTopic = PipelineTopics.raw
    /// The largest body accepted; larger ones get 413. Default 256 KiB (Apple's bodies are a few KiB).
    package var maximumBodySize = 256 * 1024
    /// How long a request waits for the broker's acknowledgement before it gets 503 (Apple retries). Also the
    /// producer's delivery timeout, so a body answered 503 is not delivered later. Default 5 s.
    package var acknowledgementTimeout: Duration = .seconds(5)
    /// A connection that sends nothing for this long, between requests or in the middle of one (a slow body),
    /// is closed. Default 30 s.
    package var idleTimeout: Duration = .seconds(30)
    /// A notification's body must have arrived this long after its head, or the connection is closed and its
    /// place among ``maximumConcurrentRequests`` freed: a sender trickling a byte now and then resets the idle timer
    /// but not this. (A head that trickles is held to the idle timeout, which its bytes do not reset.) Default 30 s.
    package var requestTimeout: Duration = .seconds(30)
    /// Notification requests handled at once; more get 503 at once, without reading their body. Default 1,024.
    package var maximumConcurrentRequests = 1_024
    /// Client addresses notification routes accept (CIDR); empty accepts any. Apple posts from `17.0.0.0/8`.
    /// (The probes and `/metrics` are on the status port, which the public load balancer never routes to.)
    package var allowedSources: [IPNetwork] = []
    /// Proxies whose `X-Forwarded-For` is believed; the client is the last address in it that is not one of them.
    package var trustedProxies: [IPNetwork] = []
    /// A secret first path segment (`/{token}/v2/notifications/...`); requests without it get 404. Default none.
    package var pathToken: String?
    /// How long `/health/ready` waits for the broker's answer. Default 2 s.
    package var readinessTimeout: Duration = .seconds(2)
    /// How long a readiness answer is reused, so frequent probes do not each ask the broker. Default 1 s.
    package var readinessCacheDuration: Duration = .seconds(1)
    /// Compression of the raw topic's batches (`compression.codec`: `none`, `gzip`, `snappy`, `lz4`, `zstd`).
    /// Default `zstd`: keyed by subscription over many partitions, a batch mostly holds one notification, and a
    /// signed body is base64 text whose certificates are base64 inside base64, so only an entropy coder gains on one
    /// body alone (lz4 ~7%, zstd ~35%). Batches of many notifications (few partitions, or one subscription's
    /// notifications in a burst) shrink ~5×, their certificates repeating.
    package var rawTopicCompression = "zstd"
    /// The level of ``rawTopicCompression`` (`compression.level`, 0-12; gzip's range is 0-9). Default 1: for zstd
    /// about the bytes of its default level 3 for about half its cost to the ingress (Docs/benchmarks.md).
    package var rawTopicCompressionLevel: Int? = 1
    /// How long the raw topic's producer waits to fill a produce request (`linger.ms`). Default 5 ms (librdkafka's
    /// own default): against 2 ms, 4% less of the ingress's CPU per notification at 2,500/s and 18% at 1,250/s
    /// (fewer, fuller requests and fewer wake-ups of the broker threads), for ~3 ms more until the answer.
    package var rawTopicLinger: Duration = .milliseconds(5)
    /// How often the raw topic's producer reports what it wrote (`statistics.interval.ms`), for the
    /// `asnp_ingress_raw_topic_*` metrics: bytes a notification costs the topic, notifications a batch. Default 10 s.
    package var rawTopicStatisticsInterval: Duration = .seconds(10)
    /// The threads serving HTTP (SwiftNIO event loops). Default nil: one per core available to the process (its
    /// cgroup CPU limit, if any, else the machine's cores). A pod that serves a share of one core does better with
    /// 1: every request wakes its event loop twice (its body, then the broker's acknowledgement), and spread over
    /// more threads those wake-ups rarely coincide (one thread: 5% less CPU per notification at 2,500/s on 2 cores).
    package var eventLoopThreads: Int?

    /// Settings serving `apps`, with the defaults above.
    package init(apps: [PipelineApp]) {
        self.apps = apps
    }

    /// The settings of the producer that writes the raw topic to `cluster`: its delivery timeout is the
    /// acknowledgement timeout, so that a body answered 503 is not delivered later (librdkafka gives up when the
    /// request does), and it compresses and lingers as ``rawTopicCompression`` and ``rawTopicLinger`` say.
    package func producerConfiguration(cluster: KafkaClusterConfiguration) -> KafkaProducerConfiguration {
        var producer = KafkaProducerConfiguration(cluster: cluster)
        producer.deliveryTimeout = acknowledgementTimeout
        producer.compression = rawTopicCompression
        producer.compressionLevel = rawTopicCompressionLevel
        producer.linger = rawTopicLinger
        producer.statisticsInterval = rawTopicStatisticsInterval
        return producer
    }

    /// The values ``rawTopicCompression`` may take: librdkafka's codecs.
    package static let compressionCodecs = ["none", "gzip", "snappy", "lz4", "zstd"]

    /// Checks the settings; throws ``IngressError/Code/invalidConfiguration`` naming the first bad one.
    package func validate() throws(IngressError) {
        func invalid(_ reason: String) -> IngressError { IngressError(code: .invalidConfiguration, reason: reason) }
        guard !apps.isEmpty else { throw invalid("no app is configured: configure at least one (apps.names)") }
        var names = Set<String>()
        for app in apps {
            guard PipelineApp.isValidName(app.name) else {
                throw invalid("app name '\(app.name)' is not 1-64 of a-z, 0-9, '-', '_'")
            }
            guard names.insert(app.name).inserted else { throw invalid("app '\(app.name)' is configured twice") }
        }
        guard (0...65_535).contains(port) else { throw invalid("port \(port) is not 0-65535") }
        guard !rawTopic.isEmpty else { throw invalid("the raw topic name is empty") }
        guard maximumBodySize > 0 else { throw invalid("maximumBodySize must be positive") }
        guard acknowledgementTimeout > .zero, idleTimeout > .zero, readinessTimeout > .zero, requestTimeout > .zero
        else {
            throw invalid("acknowledgementTimeout, idleTimeout, readinessTimeout and requestTimeout must be positive")
        }
        guard maximumConcurrentRequests > 0 else { throw invalid("maximumConcurrentRequests must be positive") }
        if let eventLoopThreads, eventLoopThreads < 1 { throw invalid("eventLoopThreads must be at least 1") }
        guard Self.compressionCodecs.contains(rawTopicCompression) else {
            throw invalid(
                "rawTopicCompression '\(rawTopicCompression)' is not one of "
                    + Self.compressionCodecs.joined(separator: ", ")
            )
        }
        if let rawTopicCompressionLevel,
            !KafkaProducerConfiguration.compressionLevels.contains(rawTopicCompressionLevel)
        {
            throw invalid("rawTopicCompressionLevel \(rawTopicCompressionLevel) is not 0-12")
        }
        if let pathToken {
            guard pathToken.utf8.count >= 16, !pathToken.contains("/") else {
                throw invalid("the path token must be at least 16 characters without '/'")
            }
        }
    }
}

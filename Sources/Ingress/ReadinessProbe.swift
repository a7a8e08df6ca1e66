import KafkaClient
import Synchronization

/// Answers `/health/ready`: whether the producer reaches a broker that has the raw topic.
///
/// The answer is reused for a short while, so a probe every second from each of many kubelets costs the broker
/// one metadata request per period at most.
final class ReadinessProbe: Sendable {
    private let producer: KafkaProducer
    private let topic: String
    private let timeout: Duration
    private let cacheDuration: Duration
    private let last = Mutex<(at: ContinuousClock.Instant, failure: String?)?>(nil)

    init(producer: KafkaProducer, topic: String, timeout: Duration, cacheDuration: Duration) {
        self.producer = producer
        self.topic = topic
        self.timeout = timeout
        self.cacheDuration = cacheDuration
    }

    /// nil when ready; otherwise why not.
    func check() async -> String? {
        let now = ContinuousClock.now
        if let cached = last.withLock({ $0 }), now - cached.at < cacheDuration {
            return cached.failure
        }
        var failure: String?
        do throws(KafkaError) {
            _ = try await producer.partitionCount(of: topic, timeout: timeout)
        } catch {
            failure = "\(error)"
        }
        last.withLock { $0 = (ContinuousClock.now, failure) }
        return failure
    }
}

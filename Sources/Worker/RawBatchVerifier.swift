import AppStoreModels
import AppStoreVerification
import KafkaClient
import NIOCore
import NotificationStore
import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns a partition's consumed raw messages into a ``NotificationBatch``: each body verified by its app and
/// environment's verifier, in parallel, the verdicts in offset order.
///
/// Every message gets a verdict: verified, or rejected with a status and reason (Apple's verification statuses, or
/// `INVALID_HEADERS`, `UNKNOWN_APP`, `APP_NOT_CONFIGURED` for messages this worker cannot attribute). The one
/// exception is `RETRYABLE_VERIFICATION_FAILURE`: such a batch must be tried again later, never stored as rejected.
package struct RawBatchVerifier: Sendable {
    /// A verification that may succeed later; the whole batch is retried.
    package struct RetryLater: Error, Sendable, CustomStringConvertible {
        package var message: KafkaTopicPartitionOffset
        package var error: VerificationError
        package var description: String { "verification of \(message) must be retried: \(error)" }
    }

    let directory: VerifierDirectory
    /// The places the batches' runs share: one per body verified at once.
    let slots: VerificationSlots

    /// Bodies verified at once, over every batch being verified; verification is pure CPU, so about the number of
    /// cores.
    var parallelism: Int { slots.count }

    package init(directory: VerifierDirectory, parallelism: Int) {
        self.directory = directory
        self.slots = VerificationSlots(count: parallelism)
    }

    /// Verifies `messages` (one partition's, in offset order) and returns the batch in the same order.
    ///
    /// The messages are split into `parallelism` runs of neighbours, a task each: a task per message cost a task's
    /// creation and two hand-offs between threads for every body, and the bodies of a batch take about as long each.
    /// Each run verifies once it has one of the `parallelism` places that every batch of this verifier shares.
    package func batch(for messages: [KafkaMessage]) async throws(RetryLater) -> NotificationBatch {
        let directory = directory
        let slots = slots
        let runs = min(parallelism, messages.count)
        let results = await withTaskGroup(of: (Int, [Result<NotificationBatch.Entry, RetryLater>]).self) { group in
            for run in 0..<runs {
                let range = messages.count * run / runs..<messages.count * (run + 1) / runs
                group.addTask {
                    await slots.take()
                    var entries: [Result<NotificationBatch.Entry, RetryLater>] = []
                    entries.reserveCapacity(range.count)
                    for index in range { entries.append(await Self.entry(for: messages[index], directory: directory)) }
                    slots.give()
                    return (run, entries)
                }
            }
            var byRun = [[Result<NotificationBatch.Entry, RetryLater>]](repeating: [], count: runs)
            while let (run, entries) = await group.next() { byRun[run] = entries }
            return byRun
        }
        var batch = NotificationBatch()
        batch.entries.reserveCapacity(messages.count)
        for run in results {
            for result in run { batch.entries.append(try result.get()) }
        }
        return batch
    }

    /// One message's entry: its raw form for the store, and its verdict.
    static func entry(
        for message: KafkaMessage,
        directory: VerifierDirectory
    ) async -> Result<NotificationBatch.Entry, RetryLater> {
        let fields = Dictionary(
            message.headers.compactMap { header in header.stringValue.map { (header.key, $0) } },
            uniquingKeysWith: { first, _ in first }
        )
        let coordinates = KafkaTopicPartitionOffset(
            topic: message.topic,
            partition: message.partition,
            offset: message.offset
        )
        let brokerTime = message.timestamp.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1_000) }
        let body = Array(message.value.readableBytesView)
        var raw = RawNotification(
            body: body,
            key: message.key.map { String(decoding: $0.readableBytesView, as: UTF8.self) },
            headers: fields,
            receivedAt: brokerTime ?? Date(),
            source: coordinates,
            traceContext: TraceContextHeaders.context(in: fields).map {
                TraceContext(traceparent: $0.traceparent, tracestate: $0.tracestate)
            }
        )
        let headers: RawNotificationHeaders
        do throws(RawNotificationHeadersError) {
            headers = try RawNotificationHeaders(fields: fields)
        } catch {
            return .success(.init(raw: raw, verdict: .rejected(status: error.code.rawValue, reason: error.reason)))
        }
        raw.receivedAt = headers.receivedAt
        let version = NotificationVersion(rawValue: headers.version)
        switch directory.verifier(app: headers.app, environment: headers.environment, version: version) {
        case .failure(let unavailable):
            return .success(.init(raw: raw, verdict: .rejected(status: unavailable.status, reason: unavailable.reason)))
        case .success(let verifier):
            switch await verifier.verify(body: body, version: version) {
            case .verified(let notification):
                return .success(.init(raw: raw, verdict: .verified(notification)))
            case .rejected(let error) where error.isRetriable:
                return .failure(RetryLater(message: coordinates, error: error))
            case .rejected(let error):
                return .success(.init(raw: raw, verdict: .rejected(status: error.code.rawValue, reason: error.reason)))
            }
        }
    }
}

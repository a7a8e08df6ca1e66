import AppStoreModels
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import Prometheus
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Publishes a raw-topic partition's outbox rows to the output topics, in row order, and deletes each once the
/// broker acknowledged its event.
///
/// Delivery is at least once: a crash between the acknowledgement and the delete publishes the rows again, with
/// the same event ids, when this member or the next owner of the partition publishes its outbox. A row the broker
/// refuses for good (``KafkaError/Code/refused``: too large, not authorised) is set aside in the table with the
/// reason, counted and logged, and does not hold up the rows after it.
///
/// The compacted state topic ends on each subscription's current state whatever order two members publish in: a
/// state event read from the table is the subscription's current state, and the statement that deletes an
/// acknowledged state row keeps it instead if the subscription changed meanwhile (a later change whose own event may
/// already be out): then the current state is published once more.
///
/// Each event is published in its notification's trace (``OutboxMessage/traceContext``), with a `send` span per
/// publication when tracing is on (``startSpan(sending:)``).
struct OutboxPublisher: Sendable {
    let store: NotificationStore
    let producer: KafkaProducer
    let topics: OutputTopics
    let metrics: WorkerMetrics
    /// The configured apps' names by bundle id: the freshness metrics' `app` label.
    var appNames: [String: String] = [:]
    /// Records a span per publication; nil when tracing is off.
    var tracer: (any Tracer)? = nil
    let logger: Logger
    /// Rows read and published at a time.
    var chunk = 500
    /// Times a state is published again because it changed while being published, before giving up for now.
    var maximumStateRepublications = 5

    /// Publishes everything pending for `partition` in the table.
    func publishPending(for partition: KafkaTopicPartition) async -> OutboxDrain.StateMachine.Outcome {
        var throughID: Int64?
        do {
            while true {
                let rows = try await store.pendingOutbox(source: partition, limit: chunk)
                guard let last = rows.last else { break }
                guard try await publish([(partition, rows)]).isEmpty else { return .incomplete }
                throughID = last.id
                if rows.count < chunk { break }
            }
            return .complete(throughID: throughID)
        } catch {
            logFailure(error, for: [partition])
            return .incomplete
        }
    }

    /// Publishes batches' outbox rows as their writes returned them, without reading the table (only when no older
    /// row of their partition waits: they go first): the rows of several partitions in one go, one send for all
    /// their events and one statement deleting them, each partition's outcome its own.
    func publishWritten(
        _ publications: [(partition: KafkaTopicPartition, rows: [OutboxMessage])]
    ) async -> [(KafkaTopicPartition, OutboxDrain.StateMachine.Outcome)] {
        do {
            let incomplete = try await publish(publications)
            return publications.map { partition, rows in
                (partition, incomplete.contains(partition) ? .incomplete : .complete(throughID: rows.last?.id))
            }
        } catch {
            logFailure(error, for: publications.map(\.partition))
            return publications.map { ($0.partition, .incomplete) }
        }
    }

    /// Sends the rows, deletes those acknowledged (and those with nothing to send), sets aside those refused for good;
    /// returns the partitions with rows left to try again.
    private func publish(
        _ publications: [(partition: KafkaTopicPartition, rows: [OutboxMessage])]
    ) async throws -> Set<KafkaTopicPartition> {
        var partitionOfRow: [Int64: KafkaTopicPartition] = [:]
        for (partition, rows) in publications {
            for row in rows { partitionOfRow[row.id] = partition }
        }
        let rows = publications.flatMap(\.rows)
        // A subscription's state rows before its last one publish nothing the last does not (a subscription is in
        // one partition, so its rows are in one publication, in order).
        var lastStateRow: [String: Int64] = [:]
        for row in rows {
            if case .subscriptionState = row.payload, let key = row.key { lastStateRow[key] = row.id }
        }
        var done: [Int64] = []
        var sending: [OutboxMessage] = []
        var refused: [(id: Int64, reason: String)] = []
        for row in rows {
            if case .unpublishable(let reason) = row.payload {
                // Deleting it would lose the event for good; set aside, it is counted, alerted on and kept for an
                // operator (Docs/runbook.md).
                refused.append((row.id, reason))
                metrics.countUnpublishable(stream: row.stream)
                logger.error(
                    "An outbox row's event cannot be built; the row is set aside (Docs/runbook.md)",
                    metadata: [
                        "kafka.partition": "\(partitionOfRow[row.id].map(String.init(describing:)) ?? "-")",
                        "outbox.id": "\(row.id)", "outbox.stream": "\(row.stream)", "reason": "\(reason)",
                    ]
                )
            } else if case .subscriptionState = row.payload, let key = row.key, lastStateRow[key] != row.id {
                done.append(row.id)
            } else {
                sending.append(row)
            }
        }
        let span = startSpan(sending: sending)
        var sent: [(row: OutboxMessage, message: KafkaProducerMessage)] = []
        for row in sending {
            if let message = row.outputEvent(topics: topics, trace: span?.trace ?? row.trace) {
                sent.append((row, message))
            } else {
                done.append(row.id)
            }
        }
        let results = await producer.send(contentsOf: sent.map(\.message))
        let acknowledgedAt = Date()
        var failure: KafkaError?
        var incomplete = Set<KafkaTopicPartition>()
        var states: [OutboxMessage.PublishedState] = []
        for ((row, _), result) in zip(sent, results) {
            switch result {
            case .success:
                if case .subscriptionState(let state) = row.payload, let key = row.key {
                    states.append(OutboxMessage.PublishedState(id: row.id, key: key, version: state.version))
                } else {
                    done.append(row.id)
                }
                let (app, environment) = labels(of: row)
                metrics.recordPublished(row, app: app, environment: environment, publishedAt: acknowledgedAt)
            case .failure(let error) where error.code == .refused:
                refused.append((row.id, error.description))
                metrics.countRefused(stream: row.stream, error: error)
                logger.error(
                    "The broker refused an output event for good; its outbox row is set aside (Docs/runbook.md)",
                    metadata: [
                        "kafka.partition": "\(partitionOfRow[row.id].map(String.init(describing:)) ?? "-")",
                        "outbox.id": "\(row.id)", "outbox.stream": "\(row.stream)", "error": "\(error)",
                    ]
                )
            case .failure(let error):
                failure = failure ?? error
                if let partition = partitionOfRow[row.id] { incomplete.insert(partition) }
                metrics.countUnacknowledged(stream: row.stream, error: error)
            }
        }
        let acknowledged = results.filter { (try? $0.get()) != nil }.count
        metrics.publishedEvents.increment(by: Int64(acknowledged))
        if let span = span?.span {
            span.attributes["asnp.outbox.acknowledged"] = acknowledged
            if acknowledged < sent.count {
                let message = "\(sent.count - acknowledged) of \(sent.count) events not acknowledged"
                span.setStatus(SpanStatus(code: .error, message: failure.map { "\(message): \($0)" } ?? message))
            }
            span.end()
        }
        try await store.setOutboxAside(refused)
        let changed = try await store.deleteOutbox(done, states: states)
        let traces = Dictionary(sent.map { ($0.row.id, $0.row.trace) }, uniquingKeysWith: { first, _ in first })
        for left in try await republishChangedStates(changed, traces: traces) {
            if let partition = partitionOfRow[left.id] { incomplete.insert(partition) }
        }
        if let failure {
            logger.warning(
                "Output events not acknowledged; the outbox keeps them for the next attempt",
                metadata: ["kafka.partitions": "\(incomplete.sorted())", "error": "\(failure)"]
            )
        }
        return incomplete
    }

    /// Publishes the current state of subscriptions that changed while their state was being published (a later
    /// change whose own event another member may already have sent), until they hold still, deleting their rows;
    /// returns the rows left, to be published again.
    private func republishChangedStates(
        _ changed: [OutboxMessage.PublishedState],
        traces: [Int64: OutputEvent.Trace?]
    ) async throws -> [OutboxMessage.PublishedState] {
        var changed = changed
        for _ in 0..<maximumStateRepublications where !changed.isEmpty {
            let current = try await store.subscriptionStates(Array(Set(changed.map(\.key))))
            // A subscription deleted meanwhile has nothing to publish.
            let gone = changed.filter { current[$0.key] == nil }.map(\.id)
            let pending = changed.filter { current[$0.key] != nil }
            let results = await producer.send(
                contentsOf: pending.map {
                    current[$0.key]!.outputEvent(topic: topics.subscriptionState, trace: traces[$0.id] ?? nil)
                }
            )
            var republished: [OutboxMessage.PublishedState] = []
            var unacknowledged: [OutboxMessage.PublishedState] = []
            for (row, result) in zip(pending, results) {
                switch result {
                case .success:
                    republished.append(
                        OutboxMessage.PublishedState(id: row.id, key: row.key, version: current[row.key]!.version)
                    )
                case .failure(let error):
                    unacknowledged.append(row)
                    metrics.countUnacknowledged(stream: .subscriptionState, error: error)
                }
            }
            metrics.publishedEvents.increment(by: Int64(republished.count))
            guard unacknowledged.isEmpty else {
                try await store.deleteOutbox(gone)
                return unacknowledged + republished
            }
            changed = try await store.deleteOutbox(gone, states: republished)
        }
        return changed
    }

    /// The span of publishing `rows` (nil when tracing is off or there is nothing to send), named as OpenTelemetry's
    /// messaging conventions name a producer's (`send`).
    ///
    /// When every row belongs to one trace (one notification's decoded and state events: the common case below a few
    /// notifications a second), the span continues it, and when it is recorded its context is the `trace` every
    /// event carries: one trace from the request through the publish, which a consumer continues. Otherwise it
    /// starts a trace of its own linking the rows' (up to ``Worker/maximumSpanLinks``), and each event carries its own
    /// row's.
    private func startSpan(sending rows: [OutboxMessage]) -> (span: any Span, trace: OutputEvent.Trace?)? {
        guard let tracer, !rows.isEmpty else { return nil }
        let contexts = rows.map(\.traceContext)
        var parent = ServiceContext.topLevel
        let continues = contexts.allSatisfy { $0 != nil && $0?.traceID == contexts[0]?.traceID }
        if continues, let context = contexts[0] { parent = serviceContext(of: context, tracer: tracer) }
        let span = tracer.startSpan("send", context: parent, ofKind: .producer)
        if !continues {
            var linked = Set<String>()
            for case let context? in contexts where linked.count < Worker.maximumSpanLinks {
                guard linked.insert(context.traceparent).inserted else { continue }
                span.addLink(SpanLink(context: serviceContext(of: context, tracer: tracer), attributes: [:]))
            }
        }
        span.attributes["messaging.system"] = "kafka"
        span.attributes["messaging.operation.type"] = "send"
        span.attributes["messaging.batch.message_count"] = rows.count
        guard continues, span.isRecording else { return (span, nil) }
        var headers: [KafkaHeader] = []
        tracer.inject(span.context, into: &headers, using: KafkaHeadersInjector())
        guard let traceparent = headers.first(named: TraceContextHeaders.traceparent) else { return (span, nil) }
        let tracestate = headers.first(named: TraceContextHeaders.tracestate)
        return (span, OutputEvent.Trace(traceparent: traceparent, tracestate: tracestate))
    }

    /// A stored row's trace context as the tracer reads it: a parent to continue, or a link.
    private func serviceContext(of context: TraceContext, tracer: any Tracer) -> ServiceContext {
        var serviceContext = ServiceContext.topLevel
        tracer.extract(
            TraceContextHeaders.headers(traceparent: context.traceparent, tracestate: context.tracestate),
            into: &serviceContext,
            using: KafkaHeadersExtractor()
        )
        return serviceContext
    }

    /// The app and environment a published row's freshness is counted for: its notification's (a configured app's
    /// name, Apple's environment), or for a dead letter those its raw message was sent for; `unknown` otherwise.
    private func labels(of row: OutboxMessage) -> (app: String, environment: String) {
        let bundleID: String?
        let environment: String?
        switch row.payload {
        case .decoded(let event):
            (bundleID, environment) = (event.bundleID, event.environment)
        case .subscriptionState(let state):
            (bundleID, environment) = (state.bundleID, state.environment)
        case .deadLetter(let letter):
            let app = letter.headers[RawNotificationHeaders.Name.app]
            let known = app.map { appNames.values.contains($0) } == true
            let sentFor = letter.headers[RawNotificationHeaders.Name.environment]
            let isEnvironment =
                sentFor == AppStoreEnvironment.production.rawValue
                || sentFor == AppStoreEnvironment.sandbox.rawValue
            return (known ? app! : "unknown", isEnvironment ? sentFor! : "unknown")
        case .missing, .unpublishable:
            (bundleID, environment) = (nil, nil)
        }
        return (bundleID.flatMap { appNames[$0] } ?? "unknown", environment ?? "unknown")
    }

    private func logFailure(_ error: any Error, for partitions: [KafkaTopicPartition]) {
        logger.warning(
            "Outbox not published; trying again later",
            metadata: ["kafka.partitions": "\(partitions.sorted())", "error": "\(error)"]
        )
    }
}

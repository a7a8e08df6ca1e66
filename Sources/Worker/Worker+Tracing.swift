import KafkaClient
import PipelineContract
import Tracing

extension Worker {
    /// The most links a batch's span keeps to its messages' traces: a batch of a thousand sampled messages would
    /// otherwise carry a thousand, more than a tracing backend shows.
    static let maximumSpanLinks = 128

    /// The span of a partition batch, from its verification's start to its write's end (nil when tracing is off),
    /// named as OpenTelemetry's messaging conventions name a consumer's processing (`process <topic>`). A batch of
    /// one message that carries a trace context (`traceparent`, written by the ingress) continues that trace, so one
    /// notification's spans form one trace from the request on; a larger batch starts a trace of its own and links
    /// each message's.
    func startSpan(of batch: PartitionBatch) -> (any Span)? {
        guard let tracer else { return nil }
        var contexts: [ServiceContext] = []
        for message in batch.messages where contexts.count < Self.maximumSpanLinks {
            var context = ServiceContext.topLevel
            tracer.extract(message.headers, into: &context, using: KafkaHeadersExtractor())
            if !context.isEmpty { contexts.append(context) }
        }
        let parent = batch.messages.count == 1 ? contexts.first ?? .topLevel : .topLevel
        let span = tracer.startSpan("process \(batch.partition.topic)", context: parent, ofKind: .consumer)
        if batch.messages.count > 1 {
            for context in contexts { span.addLink(SpanLink(context: context, attributes: [:])) }
        }
        span.attributes["messaging.system"] = "kafka"
        span.attributes["messaging.operation.type"] = "process"
        span.attributes["messaging.destination.name"] = batch.partition.topic
        span.attributes["messaging.destination.partition.id"] = String(batch.partition.partition)
        span.attributes["messaging.consumer.group.name"] = configuration.consumer.groupID
        span.attributes["messaging.batch.message_count"] = batch.messages.count
        span.attributes["asnp.batch.attempt"] = batch.attempts + 1
        // Who put the batch's bodies on the raw topic, when they agree: a history-fed notification's trace says so.
        let sources = Set(batch.messages.map { $0.headers.first(named: RawNotificationHeaders.Name.source) ?? "" })
        if sources.count == 1, let source = sources.first, !source.isEmpty {
            span.attributes["asnp.source"] = source
        }
        return span
    }

    /// A span of one stage of `batch` (`verify`, `store`), a child of the batch's.
    func startSpan(_ stage: String, in batch: PartitionBatch) -> (any Span)? {
        guard let tracer, let parent = batch.span else { return nil }
        return tracer.startSpan(stage, context: parent.context, ofKind: .internal)
    }

    /// Runs `work` with `span` as the task's context, so that lines logged meanwhile carry its ids (JSON logs'
    /// trace_id, span_id); without a span (tracing off), as it is, binding nothing.
    func within<Result: Sendable>(_ span: (any Span)?, _ work: () async -> Result) async -> Result {
        guard let span else { return await work() }
        return await ServiceContext.withValue(span.context) { await work() }
    }

    /// Ends the spans of the batches whose work ended (a verified batch goes on to its write, its span with it): an
    /// error unless stored.
    func endSpans(of outcomes: [BatchOutcome]) {
        for outcome in outcomes where outcome.verified == nil {
            guard let span = outcome.batch.span else { continue }
            if outcome.stored == nil {
                let reason =
                    outcome.notOwned
                    ? "another member claimed the partition"
                    : outcome.storedBehind ? "the database holds the partition through less" : "to be tried again"
                span.setStatus(SpanStatus(code: .error, message: "not stored: \(reason)"))
            }
            span.end()
        }
    }
}

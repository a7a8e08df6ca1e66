import Dispatch

/// Runs blocking librdkafka calls (timed polls, flush, close, metadata requests) off Swift's cooperative thread pool,
/// one at a time and in submission order.
///
/// A serial `DispatchQueue` targets an overcommitting global queue, so a call that blocks for its timeout holds one
/// thread of its own and never starves the cooperative pool. Order matters to the consumer: its polls, pause,
/// resume and (un)assign calls never overlap (see ``KafkaConsumer``).
struct BlockingExecutor: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the executor's thread and returns its result. Not cancellable: librdkafka calls end by their
    /// own timeouts, which callers keep short.
    func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result(catching: body))
            }
        }
        return try result.get()
    }
}

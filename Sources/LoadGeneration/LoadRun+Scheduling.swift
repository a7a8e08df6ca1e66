import Foundation
import NIOCore
import NIOPosix

extension LoadRun {
    /// `SCHED_BATCH`: `<sched.h>` defines it only under `_GNU_SOURCE`, which Glibc's Swift module does not export.
    package static let batchPolicy: Int32 = 3

    /// Runs `body` with the connections' event loops (a thread per core) scheduled `SCHED_BATCH`.
    ///
    /// The load generator stands in for Apple's servers, which are never on the pipeline's cores. Its threads wake
    /// for every request (a timer, then the answer); as ordinary threads those wake-ups preempted the measured
    /// processes' running threads (a third of the preemptions of the workers' verification threads at 2,500/s in
    /// `asnp-bench e2e`). A `SCHED_BATCH` thread gets the same share of the CPU but does not preempt when it wakes: it
    /// runs on an idle core or once the running thread's slice ends. Whatever that delay adds to a request's latency
    /// counts against the pipeline, as any delay here does. Where the policy is refused, the loops run as before.
    ///
    /// Threads the loops start inherit the policy (libdispatch starts its threads from whichever thread first needs
    /// one), and so would a process spawned from one of them; when `body` returns, every thread that became
    /// `SCHED_BATCH` meanwhile is put back, so that the pipeline's processes the benchmarks start run as in the field.
    package static func withBatchEventLoops<Value: Sendable>(
        _ body: (MultiThreadedEventLoopGroup) async throws -> Value
    ) async throws -> Value {
        let batchBefore = Set(threads(scheduled: batchPolicy))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        defer {
            // Until a pass finds none: a batch thread may start another while an earlier pass puts threads back.
            for _ in 0..<10 {
                let started = threads(scheduled: batchPolicy).filter { !batchBefore.contains($0) }
                guard !started.isEmpty else { break }
                for thread in started {
                    var parameters = sched_param(sched_priority: 0)
                    _ = sched_setscheduler(thread, SCHED_OTHER, &parameters)
                }
            }
        }
        do {
            for loop in group.makeIterator() {
                try await loop.submit {
                    var parameters = sched_param(sched_priority: 0)
                    _ = pthread_setschedparam(pthread_self(), batchPolicy, &parameters)
                }.get()
            }
            let result = try await body(group)
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// The ids of this process's threads scheduled `policy`.
    package static func threads(scheduled policy: Int32) -> [pid_t] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return threads.compactMap(pid_t.init).filter { sched_getscheduler($0) == policy }
    }
}

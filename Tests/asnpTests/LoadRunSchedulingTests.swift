import AppStoreTestSupport
import Foundation
import LoadGeneration
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite("The load generator's event loops yield to the processes it measures", .tags(.pipeline))
struct LoadRunSchedulingTests {
    @Test(
        """
        Each event loop runs SCHED_BATCH while the load runs; a thread started from one inherits it meanwhile and is \
        put back to SCHED_OTHER afterwards
        """
    )
    func batchEventLoops() async throws {
        // Threads that were batch before (a test process started under SCHED_BATCH) are left as they were.
        let batchBefore = Set(LoadRun.threads(scheduled: LoadRun.batchPolicy))
        let inherited = PolicySeen()
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let policies = try await LoadRun.withBatchEventLoops { group in
            var policies: [Int32] = []
            for loop in group.makeIterator() {
                policies.append(try await loop.submit { sched_getscheduler(0) }.get())
            }
            // As libdispatch does when a loop thread first needs one of its threads.
            let started = DispatchSemaphore(value: 0)
            try await group.next().submit {
                Thread {
                    // "/proc/thread-self" links to "<pid>/task/<tid>".
                    let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
                    inherited.thread.withLock { $0 = link.flatMap { pid_t($0.split(separator: "/").last ?? "") } }
                    inherited.policy.withLock { $0 = sched_getscheduler(0) }
                    started.signal()
                    release.wait()
                }.start()
                started.wait()
            }.get()
            return policies
        }
        #expect(policies == Array(repeating: LoadRun.batchPolicy, count: System.coreCount))
        #expect(inherited.policy.withLock { $0 } == LoadRun.batchPolicy)
        let thread = try #require(inherited.thread.withLock { $0 })
        #expect(sched_getscheduler(thread) == SCHED_OTHER)
        #expect(Set(LoadRun.threads(scheduled: LoadRun.batchPolicy)).subtracting(batchBefore).isEmpty)
    }

    /// A thread's id and the policy it found itself scheduled with.
    private final class PolicySeen: Sendable {
        let thread = Mutex<pid_t?>(nil)
        let policy = Mutex<Int32?>(nil)
    }
}

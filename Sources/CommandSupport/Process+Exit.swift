import Foundation

extension Process {
    /// Waits for the process to exit on a thread of its own: `waitUntilExit()` on a task would hold one of the
    /// concurrency pool's few threads, and work running beside it (timers, deadlines) would stall.
    package func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                self.waitUntilExit()
                continuation.resume()
            }.start()
        }
    }
}

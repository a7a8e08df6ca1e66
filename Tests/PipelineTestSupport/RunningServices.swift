import AppStoreTestSupport
import Synchronization
import Testing

/// The services a rig runs beside its test, each in a task of its own: stopped by cancellation, and a service that
/// does not end within its limit fails the test by name instead of hanging the suite (it is left running).
package final class RunningServices: Sendable {
    private let tasks = Mutex<[(name: String, task: Task<Void, any Error>)]>([])

    package init() {}

    package func start(_ name: String, _ run: @escaping @Sendable () async throws -> Void) {
        tasks.withLock { $0.append((name, Task { try await run() })) }
    }

    /// Cancels every service and waits for them to end, each for at most `limit`.
    package func stop(within limit: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for service in running { service.task.cancel() }
        let hung = await withTaskGroup(of: String?.self) { group in
            for (name, task) in running {
                group.addTask { await finishes(within: limit, { _ = try? await task.value }) ? nil : name }
            }
            var hung: [String] = []
            for await name in group { if let name { hung.append(name) } }
            return hung.sorted()
        }
        if !hung.isEmpty {
            Issue.record(
                "\(hung.joined(separator: ", ")) did not stop within \(limit) of being cancelled",
                sourceLocation: sourceLocation
            )
        }
    }
}

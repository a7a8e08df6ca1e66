import AppStoreTestSupport
import Synchronization
import Testing

@testable import Worker

@Suite(
    "Verification places shared by a worker's batches: a bound on runs verifying at once, first come first served",
    .tags(.fast)
)
struct VerificationSlotsTests {
    @Test("However many ask at once, at most `count` hold a place, and every one of them gets one")
    func bound() async {
        let slots = VerificationSlots(count: 3)
        let holders = Holders()
        let served = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    await slots.take()
                    let now = holders.holding.add(1, ordering: .relaxed).newValue
                    holders.most.max(now, ordering: .relaxed)
                    // Held across suspensions, as a run holds its place across its verifications.
                    for _ in 0..<5 { await Task.yield() }
                    holders.holding.subtract(1, ordering: .relaxed)
                    slots.give()
                    return 1
                }
            }
            return await group.reduce(0, +)
        }
        #expect(served == 40)
        #expect(holders.most.load(ordering: .relaxed) <= 3)
        #expect((1...3).contains(slots.mostHeld))
        #expect(slots.waitingCount == 0)
    }

    @Test("A place given back goes to the run that has waited longest")
    func order() async {
        let slots = VerificationSlots(count: 1)
        await slots.take()
        let served = Served()
        var waiters: [Task<Void, Never>] = []
        for name in ["first", "second", "third"] {
            waiters.append(
                Task {
                    await slots.take()
                    served.names.withLock { $0.append(name) }
                    slots.give()
                }
            )
            // The next one asks only once this one waits (or, were no place held, was served).
            while slots.waitingCount < waiters.count, served.names.withLock({ $0.isEmpty }) { await Task.yield() }
        }
        #expect(served.names.withLock { $0 }.isEmpty, "no place was free")
        slots.give()
        for waiter in waiters { await waiter.value }
        #expect(served.names.withLock { $0 } == ["first", "second", "third"])
        #expect(slots.mostHeld == 1)
        #expect(slots.waitingCount == 0)
    }
}

/// The takers holding a place now, and the most at once.
private final class Holders: Sendable {
    let holding = Atomic<Int>(0)
    let most = Atomic<Int>(0)
}

/// The takers in the order they were served.
private final class Served: Sendable {
    let names = Mutex<[String]>([])
}

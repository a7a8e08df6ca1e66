import AppStoreSigning
import Foundation

/// What `asnp loadgen` posts: realistic signed V2 notifications of many subscriptions (each walking through a
/// lifecycle), with Apple-style duplicate retries, some events out of order, and a small share of tampered bodies.
struct LoadWorkload {
    /// The bodies in posting order.
    var bodies: [String]
    /// Distinct notifications among them (what the workers store).
    var notifications: Int
    var duplicates: Int
    var swapped: Int
    /// Tampered copies (what the workers reject).
    var hostile: Int

    /// Signs `count` notifications with `pki` (on every core) and arranges them. The same `seed` arranges the same
    /// way.
    static func make(
        count: Int,
        bundleId: String,
        pki: TestPKI,
        duplicateShare: Double,
        outOfOrderShare: Double,
        hostileShare: Double,
        seed: UInt64
    ) throws -> LoadWorkload {
        let events = SubscriptionEvent.samples(count: count, bundleId: bundleId)
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let signed = SignedBodies(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            signed.set(index, Result { try signer.body(for: events[index]) })
        }
        var bodies = try signed.values()
        var generator = SeededGenerator(seed: seed)

        // Neighbours swapped: a later event of a subscription may arrive before an earlier one.
        let swaps = Int((Double(count) * outOfOrderShare).rounded())
        for _ in 0..<swaps where count > 1 {
            let index = Int.random(in: 0..<(count - 1), using: &generator)
            bodies.swapAt(index, index + 1)
        }
        // Retries: a copy of a body, some time after it.
        let duplicates = Int((Double(count) * duplicateShare).rounded())
        for _ in 0..<duplicates {
            let original = Int.random(in: 0..<bodies.count, using: &generator)
            bodies.insert(bodies[original], at: Int.random(in: (original + 1)...bodies.count, using: &generator))
        }
        let hostile = Int((Double(count) * hostileShare).rounded())
        for index in 0..<hostile {
            let tampered = DevDemo.tamper(bodies[index % bodies.count])
            bodies.insert(tampered, at: Int.random(in: 0...bodies.count, using: &generator))
        }
        return LoadWorkload(
            bodies: bodies,
            notifications: count,
            duplicates: duplicates,
            swapped: swaps,
            hostile: hostile
        )
    }
}

/// Results written from `concurrentPerform`'s threads, one slot each.
private final class SignedBodies: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<String, any Error>?]

    init(count: Int) { results = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: Result<String, any Error>) {
        lock.withLock { results[index] = result }
    }

    func values() throws -> [String] {
        try lock.withLock { try results.map { try $0!.get() } }
    }
}

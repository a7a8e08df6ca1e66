import AppStoreSigning
import AppStoreTestSupport
import Foundation
import LoadGeneration
import PipelineContract
import Testing

@Suite("The load generator's workload", .tags(.fast))
struct LoadWorkloadTests {
    @Test(
        """
        Retries are spread along the load: every tenth of the bodies holds about the average share of duplicates, \
        each after its original and within the retry window of it
        """
    )
    func retriesSpreadEvenly() throws {
        let workload = try LoadWorkload.make(
            count: 12_000,
            bundleId: "com.example.notes",
            pki: try TestPKI(),
            duplicateShare: 0.05,
            outOfOrderShare: 0.1,
            hostileShare: 0,
            seed: 3
        )
        #expect(workload.duplicates == 600)
        #expect(workload.bodies.count == 12_600)
        var lastSeen: [String: Int] = [:]
        var isRetry = [Bool](repeating: false, count: workload.bodies.count)
        for (index, body) in workload.bodies.enumerated() {
            if let previous = lastSeen[body] {
                isRetry[index] = true
                // Within the window of the body it copies (that one or an earlier copy), or further by the retries
                // inserted between them after it.
                #expect(
                    index - previous <= LoadWorkload.retryWindow + workload.duplicates,
                    "a retry \(index - previous) bodies after the last copy"
                )
            }
            lastSeen[body] = index
        }
        #expect(isRetry.count(where: { $0 }) == workload.duplicates)

        let tenth = workload.bodies.count / 10
        let average = Double(workload.duplicates) / Double(workload.bodies.count)
        for part in 0..<10 {
            let share = Double(isRetry[part * tenth..<(part + 1) * tenth].count(where: { $0 })) / Double(tenth)
            // 60 expected a tenth; the bounds are about four standard deviations. Placed anywhere after their
            // originals, the first tenth held a tenth of the average and the last three times it.
            #expect(share < 1.5 * average && share > 0.5 * average, "tenth \(part): \(share) against \(average)")
        }
    }

    @Test(
        """
        Interleaved, consecutive notifications belong to different subscriptions, each subscription's in lifecycle \
        order: none of the batches a subscription's run of notifications would fill on one partition
        """
    )
    func interleavedSubscriptions() {
        let events = SubscriptionEvent.samples(count: 6 * 50 + 3, bundleId: "com.example.notes")
        let interleaved = LoadWorkload.interleavedPositions(events.map(\.originalTransactionId)).map { events[$0] }
        #expect(Set(interleaved.map(\.notificationUUID)) == Set(events.map(\.notificationUUID)))
        #expect(interleaved.count == events.count)
        // The lifecycle order puts a subscription's notifications in a row; interleaved, no two in a row (51
        // subscriptions, the last with 3).
        #expect(zip(events, events.dropFirst()).contains { $0.originalTransactionId == $1.originalTransactionId })
        #expect(
            !zip(interleaved, interleaved.dropFirst()).contains { $0.originalTransactionId == $1.originalTransactionId }
        )
        for (key, subscription) in Dictionary(grouping: interleaved, by: \.originalTransactionId) {
            #expect(subscription.map(\.signedDate) == subscription.map(\.signedDate).sorted(), "\(key)")
        }
    }

    @Test("Interleaved, the swapped neighbours are still one subscription's notifications out of order")
    func interleavedKeepsSwaps() throws {
        let workload = try LoadWorkload.make(
            count: 600,
            bundleId: "com.example.notes",
            pki: try TestPKI(),
            duplicateShare: 0,
            outOfOrderShare: 0.1,
            hostileShare: 0,
            order: .interleaved,
            seed: 3
        )
        let posts = try workload.bodies.map { body in
            (
                key: try #require(PartitionKey.peek(body: Data(body.utf8), version: 2)?.value),
                signedDate: try #require(
                    (LoadWorkload.payloadClaims(of: body)?["signedDate"] as? NSNumber)?.int64Value
                )
            )
        }
        let dates = Dictionary(grouping: posts, by: \.key).mapValues { $0.map(\.signedDate) }
        let outOfOrder = dates.values.filter { $0 != $0.sorted() }.count
        // 60 swaps, most of them within one subscription (a swap across two subscriptions' ends changes nothing).
        #expect(outOfOrder >= 20, "\(outOfOrder) subscriptions out of order")
        #expect(!zip(posts, posts.dropFirst()).contains { $0.key == $1.key })
    }
}

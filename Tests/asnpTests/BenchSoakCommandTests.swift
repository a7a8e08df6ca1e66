import AppStoreTestSupport
import Foundation
import Testing

@Suite("asnp-bench soak: the chaos soak's short form", .tags(.fault))
struct BenchSoakCommandTests {
    /// The seed is fixed so a failure here replays with the command the output's first line gives; `ASNP_SOAK_SEED`
    /// tries another.
    static let seed = ProcessInfo.processInfo.environment["ASNP_SOAK_SEED"] ?? "53"

    @Test(
        """
        Three minutes of posting through the whole pipeline with every kind of fault at least once: nothing lost, \
        duplicated beyond the contract or out of order; the memory of the resident worker within its bound
        """
    )
    func shortSoak() async throws {
        let result = try await ASNPProcess.runBench([
            "soak", "--duration", "180", "--seed", Self.seed, "--faults-per-kind", "2", "--rate", "15",
            "--drain-seconds", "180",
        ])
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("seed \(Self.seed) (replay: asnp-bench soak --seed \(Self.seed) ") == true)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(lines.last == "no violation", "\(lines)")
    }
}

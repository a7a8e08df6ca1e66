import AppStoreTestSupport
import Foundation
import Testing

@Suite("asnp-bench verify: verification, and verification with the store's rows", .tags(.process))
struct BenchVerifyCommandTests {
    @Test("a short run reports verification alone and with the rows built, each at a positive rate")
    func shortRun() async throws {
        let result = try await ASNPProcess.runBench([
            "verify", "--baseline", "none", "--count", "20", "--seconds", "0.2",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let rates = result.standardOutput.split(separator: "\n").compactMap { line -> (String, Int)? in
            // "asnp, chain cache, + store rows 1      3315 ...": the name, then cores, then notifications/s.
            guard line.hasPrefix("asnp, ") else { return nil }
            let numbers = line.split(separator: " ").compactMap { Int($0) }
            guard numbers.count >= 2 else { return nil }
            return (line.contains("+ store rows") ? "rows" : "verify", numbers[1])
        }
        #expect(rates.contains { $0.0 == "verify" && $0.1 > 0 }, "\(result.standardOutput)")
        #expect(rates.filter { $0.0 == "rows" }.count == 2, "one core and all: \(result.standardOutput)")
        #expect(rates.filter { $0.0 == "rows" }.allSatisfy { $0.1 > 0 }, "\(result.standardOutput)")
    }

    @Test("a baseline that cannot run fails the bench with the reason, exit 3 and no usage text")
    func baselineThatCannotRun() async throws {
        let result = try await ASNPProcess.runBench([
            "verify", "--count", "10", "--seconds", "0.1", "--python", "/nonexistent/python3",
        ])
        #expect(result.status == 3, "\(result.standardError)")
        #expect(result.standardError.contains("Apple's Python library did not run"), "\(result.standardError)")
        #expect(!result.standardError.contains("Usage:"), "the command line was fine: \(result.standardError)")
    }
}

import AppStoreModels
import AppStoreVerification
import Benchmark
import Foundation
import X509

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Realistic V2 subscription notifications (3 JWS each: payload, transaction, renewal info) signed by a test PKI
/// shaped like Apple's, and that PKI's root: written by `./make-workload` (`asnp-bench loadgen`, the same events as
/// `asnp-bench verify`), read once per benchmark in its setup hook, outside the measured region. The signer is not a
/// library product of the pipeline, so this package reads what it signed.
struct VerifyWorkload {
    static let bundleId = "com.example.bench"

    /// Where `./make-workload` writes: `ASNP_VERIFY_WORKLOAD`, else `.workload` beside this package's manifest.
    static var directory: URL {
        if let path = ProcessInfo.processInfo.environment["ASNP_VERIFY_WORKLOAD"] {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".workload")
    }

    /// The raw HTTP bodies, `{"signedPayload":"..."}`.
    let bodies: [[UInt8]]
    /// The root that signed them; the only trusted one.
    let root: Certificate

    init() throws {
        let directory = Self.directory
        guard let text = try? String(contentsOf: directory.appendingPathComponent("bodies.txt"), encoding: .utf8),
            let root = try? Data(contentsOf: directory.appendingPathComponent("root.der"))
        else {
            fatalError("no workload in \(directory.path): run ./make-workload first")
        }
        bodies = text.split(separator: "\n").map { Array($0.utf8) }
        self.root = try Certificate(derEncoded: Array(root))
    }

    /// A verifier trusting only this workload's root; `cacheCapacity` 0 disables the verified-chain cache.
    func verifier(cacheCapacity: Int) throws -> NotificationVerifier {
        NotificationVerifier(
            configuration: .init(policy: try VerificationPolicy(bundleId: Self.bundleId, environment: .sandbox)),
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: [root], cacheCapacity: cacheCapacity))
        )
    }
}

/// What a verify benchmark's setup hands to its measured closure.
struct VerifyState {
    let bodies: [[UInt8]]
    let verifier: NotificationVerifier
}

/// A body whose `signedPayload` is three segments of nothing decodable.
let malformedBody = Array(#"{"signedPayload":"a.b.c"}"#.utf8)

/// Builds the workload and checks, before anything is measured, that every body verifies: a benchmark of bodies
/// that fail would measure the rejection path and report nonsense.
func makeVerifyState(cacheCapacity: Int) async throws -> VerifyState {
    let workload = try VerifyWorkload()
    let verifier = try workload.verifier(cacheCapacity: cacheCapacity)
    for body in workload.bodies {
        let result = await verifier.verify(body: body)
        guard result.status == "OK" else {
            fatalError("a generated notification did not verify: \(result.status) \(result)")
        }
    }
    return VerifyState(bodies: workload.bodies, verifier: verifier)
}

/// CPU time of the whole process in nanoseconds. `cpuTotal` comes from `/proc/self/stat` on Linux in 10 ms
/// scheduler ticks, too coarse for iterations of microseconds to milliseconds; this reads the same quantity at
/// nanosecond resolution.
func processCPUNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Int(time.tv_sec) * 1_000_000_000 + Int(time.tv_nsec)
}

/// Process CPU time per iteration (scaled like the other `*` metrics), at nanosecond resolution.
let cpuNanoseconds = BenchmarkMetric.custom("CPU time, process clock (ns)", polarity: .prefersSmaller)

/// One notification per iteration, cycling through the distinct bodies; throughput is notifications/s.
func verifyOne(_ benchmark: Benchmark, _ state: VerifyState) async {
    let body = state.bodies[benchmark.currentIteration % state.bodies.count]
    let cpuStart = processCPUNanoseconds()
    let result = await state.verifier.verify(body: body)
    benchmark.measurement(cpuNanoseconds, processCPUNanoseconds() - cpuStart)
    // Checked on every iteration, so a regression that starts rejecting can't report a (fast) figure.
    guard case .verified(let notification) = result else {
        fatalError("notification did not verify: \(result.status)")
    }
    blackHole(notification)
}

/// A verifier for the rejection benchmark, checked to reject ``malformedBody`` before anything is measured.
func makeRejectVerifier() async throws -> NotificationVerifier {
    let verifier = try VerifyWorkload().verifier(cacheCapacity: 64)
    let status = await verifier.verify(body: malformedBody).status
    guard status != "OK" else { fatalError("a malformed body was accepted") }
    return verifier
}

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [
        .wallClock, .throughput, .cpuTotal, cpuNanoseconds, .mallocCountTotal, .peakMemoryResident,
    ]
    // Short runs: the machines this runs on have 2 cores.
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        warmupIterations: 50,
        maxDuration: .seconds(3),
        maxIterations: 20_000
    )

    Benchmark("Verify+decode subscription notification (chain cache)") { benchmark, state in
        await verifyOne(benchmark, state)
    } setup: {
        try await makeVerifyState(cacheCapacity: 64)
    }

    Benchmark("Verify+decode subscription notification (no chain cache)") { benchmark, state in
        await verifyOne(benchmark, state)
    } setup: {
        try await makeVerifyState(cacheCapacity: 0)
    }

    // The rejection path is microseconds: 1,000 bodies per iteration, reported per body.
    Benchmark(
        "Reject malformed body",
        configuration: .init(scalingFactor: .kilo)
    ) { benchmark, verifier in
        let cpuStart = processCPUNanoseconds()
        for _ in benchmark.scaledIterations {
            let result = await verifier.verify(body: malformedBody)
            guard case .rejected(let error) = result else {
                fatalError("a malformed body was accepted")
            }
            blackHole(error)
        }
        benchmark.measurement(cpuNanoseconds, processCPUNanoseconds() - cpuStart)
    } setup: {
        try await makeRejectVerifier()
    }
}

import Foundation

/// One run of `wrk` (Debian's HTTP load generator) posting notification bodies, and what it reported.
package struct WrkRun {
    /// Requests per second over the run.
    package var requestsPerSecond: Double
    /// Latency percentiles, in seconds.
    package var p50: Double
    package var p99: Double
    /// Answers other than 2xx/3xx, and socket errors (connect, read, write, timeout).
    package var failures: Int

    /// Cycles through the bodies (one per line of `ASNP_BENCH_BODIES`); waits `ASNP_BENCH_DELAY_MS` before each
    /// request when set, which is how a closed-loop tool like wrk offers less than its peak load.
    package static let script = """
        local bodies = {}
        for line in io.lines(os.getenv("ASNP_BENCH_BODIES")) do bodies[#bodies + 1] = line end
        local path = os.getenv("ASNP_BENCH_PATH")
        local pause = tonumber(os.getenv("ASNP_BENCH_DELAY_MS") or "0")
        local index = math.random(#bodies)
        request = function()
          index = index % #bodies + 1
          return wrk.format("POST", path, { ["Content-Type"] = "application/json" }, bodies[index])
        end
        if pause > 0 then
          -- wrk waits whole milliseconds: dither between the two nearest so the mean pause is exact.
          local whole = math.floor(pause)
          local fraction = pause - whole
          delay = function()
            if math.random() < fraction then return whole + 1 end
            return whole
          end
        end
        """

    /// Runs `wrk` against `url` on a thread of its own (never blocking the concurrency pool that serves the measured
    /// server) and parses its report.
    package static func run(
        wrk: String,
        url: URL,
        bodiesFile: URL,
        scriptFile: URL,
        connections: Int,
        threads: Int,
        seconds: Int,
        delayMilliseconds: Double
    ) async throws -> WrkRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "asnp.bench.wrk").async {
                continuation.resume(
                    with: Result {
                        try runBlocking(
                            wrk: wrk,
                            url: url,
                            bodiesFile: bodiesFile,
                            scriptFile: scriptFile,
                            connections: connections,
                            threads: threads,
                            seconds: seconds,
                            delayMilliseconds: delayMilliseconds
                        )
                    }
                )
            }
        }
    }

    private static func runBlocking(
        wrk: String,
        url: URL,
        bodiesFile: URL,
        scriptFile: URL,
        connections: Int,
        threads: Int,
        seconds: Int,
        delayMilliseconds: Double
    ) throws -> WrkRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            wrk, "-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", "--timeout", "10s",
            "-s", scriptFile.path, url.absoluteString,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["ASNP_BENCH_BODIES"] = bodiesFile.path
        environment["ASNP_BENCH_PATH"] = url.path
        environment["ASNP_BENCH_DELAY_MS"] = String(format: "%.3f", delayMilliseconds)
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0, let run = parse(text) else {
            throw WrkError(output: text)
        }
        return run
    }

    /// Reads `Requests/sec:`, the 50% and 99% lines of `--latency`, non-2xx counts and socket errors.
    package static func parse(_ text: String) -> WrkRun? {
        var requestsPerSecond: Double?
        var p50: Double?
        var p99: Double?
        var failures = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            if line.hasPrefix("Requests/sec:"), let last = fields.last {
                requestsPerSecond = Double(last)
            } else if fields.count == 2, fields[0] == "50%" {
                p50 = seconds(String(fields[1]))
            } else if fields.count == 2, fields[0] == "99%" {
                p99 = seconds(String(fields[1]))
            } else if line.contains("Non-2xx or 3xx responses:"), let last = fields.last, let count = Int(last) {
                failures += count
            } else if line.contains("Socket errors:") {
                // "Socket errors: connect 0, read 0, write 0, timeout 0"
                failures += fields.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
                    .reduce(0, +)
            }
        }
        guard let requestsPerSecond, let p50, let p99 else { return nil }
        return WrkRun(requestsPerSecond: requestsPerSecond, p50: p50, p99: p99, failures: failures)
    }

    /// `812.00us`, `1.23ms`, `2.00s` as seconds.
    package static func seconds(_ text: String) -> Double? {
        for (unit, scale) in [("us", 1e-6), ("ms", 1e-3), ("m", 60.0), ("s", 1.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }
}

/// `wrk` failed or printed something this command cannot read.
package struct WrkError: Error, CustomStringConvertible {
    package var output: String
    package var description: String { "wrk failed or its report could not be read:\n\(output)" }
}

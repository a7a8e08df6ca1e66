import ArgumentParser
import CommandSupport
import Foundation
import LoadGeneration
import Logging
import PipelineContract

/// `asnp-bench soak`: the chaos soak. The whole pipeline under a steady load of signed notifications while a seeded
/// schedule injects faults; at the end, what the pipeline promises is checked against what was sent.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Post notifications through the whole pipeline while a seeded schedule injects faults; check it all.",
        discussion: """
            Starts PostgreSQL of its own (in --postgres-timezone), librdkafka's mock cluster in this process (the \
            raw topic, the output topics and the group coordinator each on a broker of their own), `asnp ingress` \
            and --workers `asnp worker`s, and posts signed V2 notifications of many subscriptions at --rate for \
            --duration seconds, with Apple-style duplicate retries and tampered copies. Meanwhile --faults-per-kind \
            faults of every kind (`SoakSchedule.Kind`): workers SIGKILLed and restarted, scaled out and in, \
            PostgreSQL stopped and started, the raw or output broker down or slow, notifications produced with a \
            time of receipt around month boundaries, `asnp retention --apply`, `asnp replay rejected`, hostile \
            bodies. Then it waits for the pipeline to drain (at most --drain-seconds) and checks: every accepted \
            notification stored once and nothing else, hostile bodies rejected once per delivery, one decoded event \
            per stored notification in store order per key, the state topic's last value per key equal to the \
            row, each row at its newest notification, a dead letter per rejection, bodies in their UTC month's \
            partition, an empty outbox, the resident worker's memory within --memory-growth-mb. Prints the seed \
            first; the same seed replays the same schedule. Exit status: 0 no violation, 1 violations, 3 the soak \
            could not run.
            """
    )

    @Option(help: "Seconds of posting (the drain and checks come after).")
    var duration = 1_800

    @Option(help: "The schedule's seed (default: random, printed).")
    var seed: UInt64?

    @Option(help: "Faults of every kind (default: one per minute of posting).")
    var faultsPerKind: Int?

    @Option(help: "Notifications posted per second, retries and hostile bodies aside.")
    var rate = 20.0

    @Option(help: "Workers at the start (one of them, the resident, is never killed).")
    var workers = 2

    @Option(help: "PostgreSQL's timezone setting, for the whole soak.")
    var postgresTimezone = "America/New_York"

    @Option(help: "The longest wait for the pipeline to drain once posting stopped, in seconds.")
    var drainSeconds = 240

    @Option(help: "The most the resident worker's RSS may grow from the warm-up's end to the drain's end, in MB.")
    var memoryGrowthMb = 100

    @Flag(help: "Print the schedule (each fault's start, kind and length) after the seed.")
    var printSchedule = false

    var perKind: Int { faultsPerKind ?? max(1, duration / 60) }

    func validate() throws {
        guard rate > 0, workers >= 2, drainSeconds > 0, memoryGrowthMb > 0, perKind > 0 else {
            throw ValidationError(
                "--rate, --drain-seconds, --memory-growth-mb, --faults-per-kind must be positive; --workers at least 2"
            )
        }
        let shortest = SoakSchedule.shortestPosting(perKind: perKind)
        guard Duration.seconds(duration) >= shortest else {
            throw ValidationError("\(perKind) faults of every kind need --duration \(Int(shortest.seconds)) or more")
        }
    }

    func run() async throws {
        let seed = seed ?? UInt64.random(in: 0...UInt64(UInt32.max))
        // Written at once, not buffered: the seed is there even when the soak is killed before it ends.
        let replay = """
            asnp-bench soak --seed \(seed) --duration \(duration) --faults-per-kind \(perKind) --rate \(rate) \
            --workers \(workers) --postgres-timezone \(postgresTimezone)
            """
        FileHandle.standardOutput.write(Data("seed \(seed) (replay: \(replay))\n".utf8))
        if printSchedule {
            for fault in SoakSchedule(seed: seed, posting: .seconds(duration), perKind: perKind).faults {
                let (start, length) = (
                    String(format: "%.1f", fault.start.seconds), String(format: "%.1f", fault.length.seconds)
                )
                print("at \(start) s: \(fault.kind.rawValue) for \(length) s (pick \(fault.pick))")
            }
        }
        var logger = Logger(label: "asnp-bench.soak")
        logger.logLevel = .critical
        let run = SoakRun(
            seed: seed,
            posting: .seconds(duration),
            perKind: perKind,
            rate: rate,
            workers: workers,
            timeZone: postgresTimezone,
            drainLimit: .seconds(drainSeconds),
            memoryGrowthLimit: memoryGrowthMb << 20
        )
        let result: SoakRun.Result
        do {
            result = try await run.run(logger: logger)
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure("the soak could not run: \(error)")
        }
        for line in Self.report(result) { print(line) }
        if !result.violations.isEmpty { throw CLIExit.rejected }
    }

    /// The report's lines: the faults, the load, the worst stall, memory, the checks' figures, each violation.
    static func report(_ result: SoakRun.Result) -> [String] {
        func megabytes(_ bytes: Int) -> String { "\(bytes >> 20) MB" }
        func seconds(_ duration: Duration) -> String { String(format: "%.1f", duration.seconds) }
        let faults: [String] = SoakSchedule.Kind.allCases.map { "\($0.rawValue) \(result.faults[$0, default: 0])" }
        let total: Int = result.faults.values.reduce(0, +)
        let statuses: [String] = result.statuses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        let memory = result.memory
        let checks = result.checks
        var lines: [String] = [
            "posting began \(RFC3339Timestamp.string(from: result.postingStarted)) (fault times count from it)"
        ]
        lines.append(
            "faults: \(total) of \(result.schedule.faults.count) scheduled: \(faults.joined(separator: ", "))"
        )
        lines.append(
            """
            notifications: \(result.notifications) accepted (\(result.direct) produced around month boundaries), \
            \(result.posted) posts (\(result.duplicates) duplicate bodies, \(result.retries) retries after an answer \
            other than 200: \(statuses.joined(separator: ", "))), \(result.hostileAccepted) hostile bodies answered 200
            """
        )
        lines.append(
            """
            worst stall: \(seconds(result.worstStall)) s without a row stored or rejected, from \
            \(seconds(result.worstStallAt)) s; \(result.drainTimedOut ? "not drained after" : "drained in") \
            \(seconds(result.drained)) s
            """
        )
        lines.append(
            """
            memory: resident worker \(megabytes(memory.residentStart)) after the warm-up, peak \
            \(megabytes(memory.residentPeak)), \(megabytes(memory.residentEnd)) at the end; ingress \
            \(megabytes(memory.ingressStart)) to \(megabytes(memory.ingressEnd))
            """
        )
        lines.append(
            """
            checked: \(checks.stored) stored, \(checks.rejected) rejected rows, \(checks.decodedEvents) decoded events \
            (\(checks.decodedRepeats) repeats), \(checks.stateEvents) state events, \(checks.deadLetters) dead letters
            """
        )
        for failure in result.faultFailures { lines.append("fault not carried out: \(failure)") }
        for violation in result.violations { lines.append("VIOLATION \(violation)") }
        lines.append(result.violations.isEmpty ? "no violation" : "\(result.violations.count) violation(s)")
        return lines
    }
}

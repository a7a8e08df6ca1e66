import AppStoreSigning
import ArgumentParser
import CommandSupport
import Foundation
import LoadGeneration
import PostgresRuntime

/// `asnp-bench loadgen`: realistic signed notifications posted to an ingress, with latency percentiles.
struct LoadgenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "Post realistic signed notifications to an ingress and report rate and latency.",
        discussion: """
            Signs --count notifications with a fresh test PKI shaped like Apple's (subscriptions walking through \
            their lifecycles), adds Apple-style duplicate retries, swaps some neighbours out of order and tampers a \
            small share; then posts them over --connections connections, as fast as possible or at --rate, and \
            reports requests/s and p50/p99/p99.9 latency. The pipeline must trust the test root: write it with \
            --root-cert-out and give it to the workers (worker.rootCertificates, or asnp dev --root-cert). \
            --write-bodies saves the bodies (one per line) instead of posting; --bodies posts saved ones.
            """
    )

    @Option(help: "Where to post V2 bodies (http://); V1 bodies go to the same URL with /v1/ for /v2/.")
    var url = "http://127.0.0.1:8080/v2/notifications/sandbox"

    @Option(help: "Notifications to sign (six per subscription).")
    var count = 10_000

    @Option(
        help: """
            How a subscription's notifications follow one another: interleaved (consecutive ones of different \
            subscriptions, as in the field) or lifecycle (each subscription's six in a row).
            """
    )
    var subscriptionOrder: LoadWorkload.SubscriptionOrder = .interleaved

    @Option(help: "Posts at once (connections).")
    var connections = 16

    @Option(help: "Requests per second; default: as fast as possible.")
    var rate: Double?

    @Option(
        help: """
            Post a body not answered 200 again after this many seconds, until it is, as Apple does (its waits are \
            hours); default: each body once.
            """
    )
    var retrySeconds: Double?

    @Option(
        help: """
            Share of duplicate retries added (0.1: one in ten bodies posted twice), each a copy of one of the \
            \(LoadWorkload.retryWindow) bodies before it.
            """
    )
    var duplicates = 0.1

    @Option(help: "Share of neighbouring notifications swapped out of order.")
    var outOfOrder = 0.1

    @Option(help: "Share of tampered bodies added (rejected by the workers).")
    var hostile = 0.001

    @Option(help: "Share of notifications sent as legacy V1 bodies (to the V1 route); needs --shared-secret.")
    var v1Share = 0.0

    @Option(help: "The V1 shared secret the V1 bodies carry.")
    var sharedSecret: String?

    @Option(help: "The bundle id the notifications carry.")
    var bundleId = "com.example.notes"

    @Option(help: "Seed for the arrangement (the same seed, the same order).")
    var seed: UInt64 = 1

    @Option(help: "Write the test PKI's root certificate (DER) here, for the workers to trust.")
    var rootCertOut: String?

    @Option(help: "Write the bodies here, one per line, and post nothing.")
    var writeBodies: String?

    @Option(help: "Post the bodies of this file (one per line) instead of signing new ones.")
    var bodies: String?

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    func validate() throws {
        guard count > 0, connections > 0 else { throw ValidationError("--count and --connections must be positive") }
        if v1Share > 0, sharedSecret == nil { throw ValidationError("--v1-share needs --shared-secret") }
        for (name, share) in [
            ("--duplicates", duplicates), ("--out-of-order", outOfOrder), ("--hostile", hostile),
            ("--v1-share", v1Share),
        ]
        where !(0...1).contains(share) {
            throw ValidationError("\(name) must be between 0 and 1")
        }
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
        if let retrySeconds, retrySeconds < 0 { throw ValidationError("--retry-seconds must not be negative") }
        if bodies != nil, writeBodies != nil { throw ValidationError("--bodies and --write-bodies exclude each other") }
    }

    func run() async throws {
        let posts: [String]
        if let bodies {
            guard let text = try? String(contentsOfFile: bodies, encoding: .utf8) else {
                throw ValidationError("cannot read \(bodies)")
            }
            posts = text.split(separator: "\n").map(String.init)
        } else {
            let pki = try TestPKI()
            if let rootCertOut { try Data(try pki.rootDER()).write(to: URL(fileURLWithPath: rootCertOut)) }
            let started = ContinuousClock.now
            let workload = try LoadWorkload.make(
                count: count,
                bundleId: bundleId,
                pki: pki,
                duplicateShare: duplicates,
                outOfOrderShare: outOfOrder,
                hostileShare: hostile,
                v1Share: v1Share,
                sharedSecret: sharedSecret,
                order: subscriptionOrder,
                seed: seed
            )
            Self.say(
                "loadgen: signed \(workload.notifications) notifications in "
                    + String(format: "%.1f s", started.duration(to: .now).seconds)
                    + "; \(workload.bodies.count) bodies with \(workload.duplicates) duplicates, "
                    + "\(workload.swapped) swapped, \(workload.hostile) tampered"
            )
            posts = workload.bodies
        }
        if let writeBodies {
            try Data((posts.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: writeBodies))
            Self.say("loadgen: wrote \(posts.count) bodies to \(writeBodies)")
            return
        }
        let total = posts.count
        let load = LoadRun(
            url: url,
            connections: connections,
            rate: rate,
            retryDelay: retrySeconds.map { .milliseconds(Int($0 * 1_000)) }
        )
        let report = try await load.run(posts) { sent, ok in
            if sent % max(1, total / 10) == 0 { Self.say("loadgen: \(sent)/\(total) posted, \(ok) answered 200") }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
        } else {
            let others = report.statuses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            FileHandle.standardOutput.write(
                Data(
                    String(
                        format: "loadgen: %d sent, %d answered 200%@, %d errors%@ in %.1f s: %.0f requests/s; "
                            + "latency p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms\n",
                        report.sent,
                        report.ok,
                        others.isEmpty ? "" : " (" + others.joined(separator: ", ") + ")",
                        report.errors,
                        retrySeconds == nil ? "" : ", \(report.retries) retries",
                        report.seconds,
                        report.requestsPerSecond,
                        report.p50Milliseconds,
                        report.p99Milliseconds,
                        report.p999Milliseconds,
                        report.maxMilliseconds
                    ).utf8
                )
            )
        }
        // Retrying, other answers are expected on the way; what counts is that every body was accepted.
        let failed =
            retrySeconds == nil
            ? report.ok + report.statuses.values.reduce(0, +) < report.sent || report.errors > 0
            : report.ok < total
        if failed { throw CLIExit.failed }
    }

    /// Progress on standard error, at once.
    static func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

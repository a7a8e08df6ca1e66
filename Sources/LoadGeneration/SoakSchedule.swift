import AppStoreSigning

/// The faults `asnp-bench soak` injects and when: pure and seeded, so the same seed, posting time and number of
/// faults per kind give the same schedule, and a failing seed replays the same faults in the same order.
///
/// Each kind's faults fall one in each of `perKind` equal stretches of the fault window (after a warm-up, before a
/// quiet tail), at a seeded moment in the first half of its stretch and lasting at most the rest of that half, so
/// two faults of one kind never overlap (PostgreSQL is never stopped twice) while faults of different kinds do,
/// as they would in the field.
package struct SoakSchedule: Sendable, Equatable {
    /// A kind of fault. Closed for this bench, so an enum: the schedule, the run and the report switch over it.
    package enum Kind: String, CaseIterable, Sendable, Codable {
        /// SIGKILL a worker (never the resident one), start a replacement after the fault's length.
        case workerKilled = "worker-sigkill"
        /// Start an extra worker; SIGTERM one (never the resident one) after the fault's length.
        case workersScaled = "scale-out-and-in"
        /// Stop PostgreSQL (`pg_ctl stop`, fast or immediate), start it again on the same data directory and port.
        case postgresRestarted = "postgres-restart"
        /// The broker leading the raw topic stops answering (a round trip longer than the fault).
        case rawBrokerDown = "raw-broker-down"
        /// The broker leading the output topics stops answering, or answers slowly (300 ms round trips).
        case outputBrokerDown = "output-broker-down-or-slow"
        /// Notifications produced straight to the raw topic with a `received-at` around month boundaries (past,
        /// this one, the next two), so body partitions roll and retention has months to drop.
        case monthBoundary = "month-boundary"
        /// `asnp retention --apply --retain-months 1`.
        case retention = "retention"
        /// `asnp replay rejected`.
        case replayRejected = "replay-rejected"
        /// Hostile bodies posted among the good ones: garbage, JSON that is no notification, truncated and tampered
        /// JWS, and JWS-looking bodies with a unique ~200 KB header.
        case hostileBodies = "hostile-bodies"

        /// The shortest and longest a fault of this kind lasts (zero for instant ones).
        package var lengthRange: ClosedRange<Duration> {
            switch self {
            case .workerKilled: .seconds(1)...(.seconds(5))
            case .workersScaled: .seconds(5)...(.seconds(20))
            case .postgresRestarted: .seconds(2)...(.seconds(8))
            case .rawBrokerDown, .outputBrokerDown: .seconds(2)...(.seconds(8))
            case .monthBoundary, .retention, .replayRejected, .hostileBodies: .zero...(.zero)
            }
        }
    }

    /// One fault: its kind, when it starts (from the start of posting), how long it lasts, and a seeded number the
    /// run uses for its choices (which worker, stop mode, down or slow, which bodies).
    package struct Fault: Sendable, Equatable {
        package var kind: Kind
        package var start: Duration
        package var length: Duration
        package var pick: UInt64

        package var end: Duration { start + length }
    }

    package let seed: UInt64
    /// Every fault, by start.
    package let faults: [Fault]
    /// No fault starts before this (the pipeline warms up, the resident worker's memory is taken).
    package let window: Range<Duration>

    /// The schedule for `seed` over `posting` of load, `perKind` faults of every kind.
    package init(seed: UInt64, posting: Duration, perKind: Int) {
        precondition(perKind > 0, "at least one fault of every kind")
        self.seed = seed
        let (warmUp, tail) = Self.margins(posting: posting)
        window = warmUp..<(posting - tail)
        let stretch = (window.upperBound - window.lowerBound) / perKind
        var generator = SeededGenerator(seed: seed)
        var faults: [Fault] = []
        for kind in Kind.allCases {
            for index in 0..<perKind {
                let stretchStart = window.lowerBound + stretch * index
                let half = stretch / 2
                let start = stretchStart + Self.random(upTo: half / 2, using: &generator)
                let room = stretchStart + half - start
                let longest = min(kind.lengthRange.upperBound, room)
                let shortest = min(kind.lengthRange.lowerBound, longest)
                let length = shortest + Self.random(upTo: longest - shortest, using: &generator)
                faults.append(Fault(kind: kind, start: start, length: length, pick: generator.next()))
            }
        }
        self.faults = faults.sorted { ($0.start, $0.kind.rawValue) < ($1.start, $1.kind.rawValue) }
    }

    /// A warm-up of a tenth of the posting time (at least 10 s, at most 60 s) and a quiet tail of the same, so the
    /// last fault ends while bodies are still posted.
    package static func margins(posting: Duration) -> (warmUp: Duration, tail: Duration) {
        let margin = min(max(posting / 10, .seconds(10)), .seconds(60))
        return (margin, margin)
    }

    /// The shortest posting time that gives every fault a stretch of at least 8 s (so at least 2 s to last) after
    /// the shortest warm-up and before the shortest tail.
    package static func shortestPosting(perKind: Int) -> Duration {
        .seconds(8) * perKind + .seconds(20)
    }

    /// A seeded duration in 0...`limit`, at millisecond resolution.
    private static func random(upTo limit: Duration, using generator: inout SeededGenerator) -> Duration {
        let (seconds, attoseconds) = limit.components
        let milliseconds: Int64 = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return .milliseconds(Int64.random(in: 0...max(0, milliseconds), using: &generator))
    }
}

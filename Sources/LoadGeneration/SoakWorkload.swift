import AppStoreModels
import AppStoreSigning
import Foundation

/// What `asnp-bench soak` sends: signed V2 notifications of many subscriptions posted through the ingress with
/// Apple-style duplicate retries, some of them tampered; a share set aside to be produced straight to the raw topic
/// around month boundaries; and, per hostile-bodies fault, a burst of bodies that are no notification at all.
package struct SoakWorkload: Sendable {
    /// The bodies posted through the ingress (retried until answered 200), in posting order.
    package var posted: [String]
    /// Bodies set aside for the month-boundary faults: distinct notifications posted nowhere else, one group per
    /// fault.
    package var direct: [[String]]
    /// The `notificationUUID` of each good body (posted or direct), by body.
    package var uuids: [String: String]
    /// Tampered copies among `posted`: answered 200, rejected by the workers.
    package var tampered: Set<String>
    /// Duplicates among `posted` (a body posted again later, as Apple retries).
    package var duplicates: Int

    /// How many ~200 KB unique headers a hostile-bodies fault posts: 2 MB a fault, 60 MB over a 30-minute soak's 30
    /// faults, which a verifier keeping such headers would hold past the memory bound.
    package static let bigHeaders = 10

    /// How many bodies a month-boundary fault produces: one per instant of ``monthBoundaryInstants(around:)``.
    package static let boundaryInstants = 6

    /// Signs `count` notifications and arranges them with `seed`; sets aside `boundaryFaults` groups for the
    /// month-boundary faults.
    package static func make(count: Int, boundaryFaults: Int, bundleId: String, pki: TestPKI, seed: UInt64) throws
        -> SoakWorkload
    {
        let load = try LoadWorkload.make(
            count: count,
            bundleId: bundleId,
            pki: pki,
            duplicateShare: 0.1,
            outOfOrderShare: 0.05,
            hostileShare: 0,
            seed: seed
        )
        var uuids: [String: String] = [:]
        var distinct: [String] = []
        for body in load.bodies where uuids[body] == nil {
            uuids[body] = LoadWorkload.notificationUUID(of: body) ?? ""
            distinct.append(body)
        }
        // Every n-th distinct notification goes straight to the raw topic instead of through the ingress.
        let wanted = boundaryFaults * boundaryInstants
        let every = max(1, distinct.count / max(1, wanted))
        let setAside = Array(stride(from: 0, to: distinct.count, by: every).prefix(wanted).map { distinct[$0] })
        let setAsideSet = Set(setAside)
        var posted = load.bodies.filter { !setAsideSet.contains($0) }
        var generator = SeededGenerator(seed: seed ^ 0x50AC)
        let tampered = insertTampered(
            into: &posted,
            picks: max(1, count / 100),
            using: &generator,
            tamper: NotificationSigner.tampered
        )
        let direct = stride(from: 0, to: setAside.count, by: boundaryInstants).map {
            Array(setAside[$0..<min($0 + boundaryInstants, setAside.count)])
        }
        return SoakWorkload(
            posted: posted,
            direct: direct,
            uuids: uuids,
            tampered: tampered,
            duplicates: load.duplicates
        )
    }

    /// Tampered copies of `picks` bodies of `posted` put among them at random places, each copy once: a body picked
    /// twice (or a duplicate delivery of it) gives the same copy, and the checks expect one rejection per post of a
    /// tampered body (a 30-minute soak's 324 picks met twice). Returns the copies.
    package static func insertTampered(
        into posted: inout [String],
        picks: Int,
        using generator: inout some RandomNumberGenerator,
        tamper: (String) -> String
    ) -> Set<String> {
        var tampered = Set<String>()
        for _ in 0..<picks where !posted.isEmpty {
            let copy = tamper(posted[Int.random(in: 0..<posted.count, using: &generator)])
            guard tampered.insert(copy).inserted else { continue }
            posted.insert(copy, at: Int.random(in: 0...posted.count, using: &generator))
        }
        return tampered
    }

    /// The times of receipt a month-boundary fault gives its bodies, around `now`: the last millisecond of the month
    /// three months back and the first of the month after it (months `asnp retention --retain-months 1` drops); the
    /// last millisecond of this month; the first of the next; the next month's fifth hour in UTC less a millisecond
    /// (still this month in New York); the first millisecond of the month after next (a partition no migration
    /// made).
    package static func monthBoundaryInstants(around now: Date) -> [Date] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let thisMonth = calendar.date(from: calendar.dateComponents([.year, .month], from: now))!
        func month(_ offset: Int) -> Date { calendar.date(byAdding: .month, value: offset, to: thisMonth)! }
        let millisecond = 0.001
        return [
            month(-2).addingTimeInterval(-millisecond),
            month(-2),
            month(1).addingTimeInterval(-millisecond),
            month(1),
            month(1).addingTimeInterval(5 * 3_600 - millisecond),
            month(2),
        ]
    }

    /// The hostile bodies of one fault, from its `pick`: garbage that is not JSON (the ingress refuses it, 400),
    /// JSON that is no notification, a JWS cut short, a tampered signature, and ``bigHeaders`` JWS-looking bodies
    /// whose header is ~200 KB and unique (answered 200, rejected by the workers; a verifier that kept such headers
    /// would grow).
    /// `sample` is a good signed body to cut and tamper with.
    package static func hostileBodies(pick: UInt64, sample: String) -> (refused: [String], rejected: [String]) {
        var generator = SeededGenerator(seed: pick)
        let garbage =
            "\u{1}not json \(pick) \(String(repeating: "%", count: Int.random(in: 1...64, using: &generator)))"
        let notANotification = #"{"hello":"world","pick":\#(pick)}"#
        let jws = sample.split(separator: "\"").dropFirst(3).first.map(String.init) ?? ""
        let cut = String(jws.prefix(Int.random(in: 1..<max(2, jws.count), using: &generator)))
        let truncated = #"{"signedPayload":"\#(cut)"}"#
        let tampered = NotificationSigner.tampered(sample)
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        let payload = segments.count == 3 ? String(segments[1]) : "e30"
        let signature = segments.count == 3 ? String(segments[2]) : "AAAA"
        let bigHeaders = (0..<Self.bigHeaders).map { _ in
            var noise = [UInt8](repeating: 0, count: 110_000)
            for index in noise.indices { noise[index] = UInt8.random(in: 0...255, using: &generator) }
            let header = #"{"alg":"ES256","x5c":["\#(Data(noise).base64EncodedString())"]}"#
            let encoded = Base64URL.encode(Array(header.utf8))
            return #"{"signedPayload":"\#(encoded).\#(payload).\#(signature)"}"#
        }
        return ([garbage], [notANotification, truncated, tampered] + bigHeaders)
    }
}

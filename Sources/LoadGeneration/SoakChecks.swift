import Crypto
import Foundation
import PipelineContract

/// The end of `asnp-bench soak`: what the database and the output topics hold, against what was posted, each
/// discrepancy named precisely. The promises checked are Docs/reliability.md's and Docs/contract/README.md's:
///
/// - every notification answered 200 (or acknowledged by the raw topic) is stored, once by its `notificationUUID`,
///   and nothing else is; no good notification is rejected;
/// - each hostile body answered 200 is rejected once per delivery (a post not answered may add one), a body the
///   ingress refused never is, and `asnp replay rejected` adds rows only for rejected bodies;
/// - the decoded topic holds one event per stored notification at least once (repeats of a `ce_id` are allowed),
///   and per key the first event of each notification comes in store order (`stored_at`, then the raw message's
///   coordinates: the order the workers stored them);
/// - the state topic's last value per key is the `subscriptions` row (timestamps compared as instants: the contract
///   allows any offset), with no key missing on either side;
/// - each row's newest notification is the newest stored for it by (`signed_date`, `notification_uuid`), the rule
///   Docs/entitlement.md gives for that part (the other parts are held by SubscriptionRulesTests);
/// - the dead-letter topic holds a letter for every rejected row and none for anything else (by `ce_id`);
/// - every body of a month retention keeps is in `notification_bodies`, in the partition of its UTC month;
/// - the outbox is empty.
package struct SoakChecks {
    /// What was sent, and what each answer promised.
    package struct Expectations: Sendable {
        /// The `notificationUUID`s of the good notifications accepted (answered 200, or acknowledged by the raw
        /// topic).
        package var notifications: Set<String> = []
        /// The SHA-256 (hex) of every good body: none may be rejected.
        package var goodBodies: Set<String> = []
        /// Hostile bodies by SHA-256: how often answered 200 and how often posted without an answer or a 200.
        package var hostile: [String: (accepted: Int, unanswered: Int)] = [:]
        /// Hostile bodies the ingress refused with a 4xx on every post: never rejected by a worker.
        package var refused: Set<String> = []
        /// Bodies received before this may be gone: `asnp retention` dropped their month.
        package var retentionCutoff: Date

        package init(
            notifications: Set<String> = [],
            goodBodies: Set<String> = [],
            hostile: [String: (accepted: Int, unanswered: Int)] = [:],
            refused: Set<String> = [],
            retentionCutoff: Date
        ) {
            self.notifications = notifications
            self.goodBodies = goodBodies
            self.hostile = hostile
            self.refused = refused
            self.retentionCutoff = retentionCutoff
        }

        /// Counts a post of the hostile `body`: answered 200, or not (which may still have delivered it).
        package mutating func posted(hostile body: String, answered: Bool) {
            var posts: (accepted: Int, unanswered: Int) = hostile[SoakChecks.sha256(body)] ?? (0, 0)
            if answered { posts.accepted += 1 } else { posts.unanswered += 1 }
            hostile[SoakChecks.sha256(body)] = posts
        }
    }

    /// What was found.
    package struct Result: Sendable {
        package var violations: [String] = []

        package init(
            violations: [String] = []
        ) {
            self.violations = violations
        }
        package var stored = 0
        package var rejected = 0
        package var decodedEvents = 0
        package var decodedRepeats = 0
        package var stateEvents = 0
        package var deadLetters = 0
    }

    package static func sha256(_ body: String) -> String {
        SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Checks the database through `query` (psql's unaligned, tuples-only output) and `output` against
    /// `expected`.
    package static func check(
        _ expected: Expectations,
        output: SoakOutputContents,
        query: (String) async throws -> String
    ) async throws -> Result {
        var result = Result()
        func lines(_ sql: String) async throws -> [[Substring]] {
            try await query(sql).split(separator: "\n").map {
                $0.split(separator: "|", omittingEmptySubsequences: false)
            }
        }
        func sample(_ values: some Collection<String>) -> String {
            let shown = values.sorted().prefix(3).joined(separator: ", ")
            return values.count > 3 ? "\(shown), ..." : shown
        }

        // Stored: exactly the accepted notifications.
        let store = try await lines(
            """
            SELECT notification_uuid, coalesce(original_transaction_id, notification_uuid::text) FROM notifications
            ORDER BY stored_at, kafka_topic, kafka_partition, kafka_offset
            """
        )
        let stored = store.map { String($0[0]) }
        result.stored = stored.count
        let storedSet = Set(stored)
        let missing = expected.notifications.subtracting(storedSet)
        let unexplained = storedSet.subtracting(expected.notifications)
        if !missing.isEmpty {
            result.violations.append(
                "lost: \(missing.count) accepted notification(s) not stored, e.g. \(sample(missing))"
            )
        }
        if !unexplained.isEmpty {
            result.violations.append(
                """
                unexplained: \(unexplained.count) stored notification(s) no accepted body carries: \
                \(sample(unexplained))
                """
            )
        }

        // Rejected: hostile bodies only, once per delivery.
        let rejectedRows = try await lines(
            """
            SELECT encode(sha256(coalesce(asnp_raw_body(body), legacy_raw_body)), 'hex'),
                coalesce(headers->>'asnp-source', ''),
                kafka_topic || '/' || kafka_partition || '/' || kafka_offset
            FROM rejected_notifications
            """
        )
        result.rejected = rejectedRows.count
        var delivered: [String: Int] = [:]
        var goodRejected = 0
        var unknown = Set<String>()
        for row in rejectedRows {
            let hash = String(row[0])
            if expected.goodBodies.contains(hash) { goodRejected += 1 }
            if expected.hostile[hash] == nil, !expected.refused.contains(hash) { unknown.insert(hash) }
            if row[1] != "replay" { delivered[hash, default: 0] += 1 }
        }
        if goodRejected > 0 {
            result.violations.append("rejected: \(goodRejected) row(s) of good, signed notifications")
        }
        if !unknown.isEmpty {
            result.violations.append("rejected: rows for \(unknown.count) body(ies) never posted")
        }
        let refusedRejected = expected.refused.filter { delivered[$0, default: 0] > 0 }
        if !refusedRejected.isEmpty {
            result.violations.append(
                "rejected: \(refusedRejected.count) body(ies) the ingress refused (4xx) reached a worker"
            )
        }
        let miscounted = expected.hostile.filter { hash, posts in
            let rows = delivered[hash, default: 0]
            return rows < posts.accepted || rows > posts.accepted + posts.unanswered
        }
        if !miscounted.isEmpty {
            let examples: [String] = miscounted.prefix(3).map { hash, posts in
                let rows = delivered[hash, default: 0]
                return
                    """
                    \(hash.prefix(12)): \(rows) row(s) for \(posts.accepted) post(s) answered 200, \
                    \(posts.unanswered) not
                    """
            }
            result.violations.append(
                """
                rejected: \(miscounted.count) hostile body(ies) not rejected once per delivery, e.g. \
                \(examples.joined(separator: "; "))
                """
            )
        }

        // Decoded: one event per stored notification, in store order per key.
        var firstSeen: [String: [String]] = [:]
        var ids = Set<String>()
        for events in output.decoded.values {
            for event in events {
                result.decodedEvents += 1
                if ids.insert(event.id).inserted {
                    firstSeen[event.key, default: []].append(event.id)
                } else {
                    result.decodedRepeats += 1
                }
            }
        }
        let withoutEvent = storedSet.subtracting(ids)
        let eventWithoutRow = ids.subtracting(storedSet)
        if !withoutEvent.isEmpty {
            // When they were received says whether retention dropped their month before they were published.
            let listed = withoutEvent.sorted().prefix(3).map { "'\($0)'" }.joined(separator: ", ")
            let received = try await query(
                """
                SELECT string_agg(notification_uuid || ' received ' || to_char(received_at AT TIME ZONE 'UTC', \
                'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ', ') FROM notifications WHERE notification_uuid IN (\(listed))
                """
            )
            result.violations.append(
                "decoded topic: \(withoutEvent.count) stored notification(s) without an event, e.g. \(received)"
            )
        }
        if !eventWithoutRow.isEmpty {
            result.violations.append(
                """
                decoded topic: \(eventWithoutRow.count) event(s) of no stored notification, e.g. \
                \(sample(eventWithoutRow))
                """
            )
        }
        var storeOrder: [String: [String]] = [:]
        for row in store { storeOrder[String(row[1]), default: []].append(String(row[0])) }
        let misordered = storeOrder.compactMap { key, order -> String? in
            let published = firstSeen[key] ?? []
            let expectedOrder = order.filter(Set(published).contains)
            guard published.filter(storedSet.contains) != expectedOrder else { return nil }
            return
                "\(key): published \(published.joined(separator: " ")), stored \(expectedOrder.joined(separator: " "))"
        }
        if !misordered.isEmpty {
            result.violations.append(
                "decoded topic: \(misordered.count) key(s) out of store order, e.g. "
                    + misordered.sorted().prefix(2).joined(separator: "; ")
            )
        }

        // State: the last value per key is the row.
        result.stateEvents = output.stateEvents
        var rows: [String: String] = [:]
        for line in try await query(
            "SELECT original_transaction_id || ' ' || to_jsonb(s)::text FROM subscriptions s"
        ).split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            rows[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        let differing = Set(rows.keys).union(output.lastState.keys).filter { key in
            guard let row = rows[key], let event = output.lastState[key] else { return true }
            return Self.instantsNormalized(row) != Self.instantsNormalized(event)
        }
        if !differing.isEmpty {
            let examples: [String] = differing.sorted().prefix(2).map { key in
                "\(key): event \(output.lastState[key] ?? "none"), row \(rows[key] ?? "none")"
            }
            result.violations.append(
                """
                state topic: the last event of \(differing.count) subscription(s) is not its row, e.g. \
                \(examples.joined(separator: "; "))
                """
            )
        }
        let notNewest = try await query(
            """
            SELECT s.original_transaction_id FROM subscriptions s
            WHERE NOT EXISTS (
                SELECT 1 FROM (
                    SELECT n.notification_uuid, n.signed_date FROM notifications n
                    WHERE n.original_transaction_id = s.original_transaction_id
                    ORDER BY n.signed_date DESC, n.notification_uuid DESC LIMIT 1) newest
                WHERE newest.notification_uuid = s.last_notification_uuid
                    AND newest.signed_date = s.last_signed_date)
            UNION ALL
            SELECT DISTINCT n.original_transaction_id FROM notifications n
            WHERE n.original_transaction_id IS NOT NULL
                AND NOT EXISTS (
                    SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = n.original_transaction_id)
            """
        ).split(separator: "\n").map(String.init)
        if !notNewest.isEmpty {
            result.violations.append(
                "subscriptions: \(notNewest.count) row(s) not at their newest stored notification (or missing), e.g. "
                    + sample(notNewest)
            )
        }

        // Dead letters: one per rejected row.
        result.deadLetters = output.deadLetters.count
        let letters = Set(output.deadLetters)
        let rejectedIDs = Set(rejectedRows.map { String($0[2]) })
        if letters != rejectedIDs {
            let unlettered = rejectedIDs.subtracting(letters).count
            let unexplainedLetters = letters.subtracting(rejectedIDs).count
            result.violations.append(
                """
                dead-letter topic: \(unlettered) rejected row(s) without a letter, \(unexplainedLetters) letter(s) \
                for no rejected row
                """
            )
        }

        // Bodies: kept for the months retention keeps, each in its UTC month's partition.
        let cutoff = RFC3339Timestamp.string(from: expected.retentionCutoff)
        let bodiless = try await query(
            """
            SELECT count(*) FROM notifications n WHERE n.received_at >= '\(cutoff)' AND NOT EXISTS (
                SELECT 1 FROM notification_bodies b
                WHERE b.notification_uuid = n.notification_uuid AND b.received_at = n.received_at)
            """
        )
        if bodiless != "0" {
            result.violations.append("bodies: \(bodiless) notification(s) received since \(cutoff) without a body")
        }
        let misplaced = try await query(
            """
            SELECT tableoid::regclass::text || ': ' || count(*) FROM notification_bodies
            WHERE tableoid::regclass::text
                <> 'notification_bodies_' || to_char(received_at AT TIME ZONE 'UTC', 'YYYY_MM')
            GROUP BY tableoid
            """
        )
        if !misplaced.isEmpty {
            result.violations.append(
                "bodies: outside the partition of their UTC month: "
                    + misplaced.split(separator: "\n").joined(separator: ", ")
            )
        }

        let outbox = try await query("SELECT count(*) FILTER (WHERE refused_at IS NULL), count(*) FROM outbox")
        if outbox != "0|0" {
            result.violations.append(
                "outbox: \(outbox.replacingOccurrences(of: "|", with: " to publish, ")) rows in all"
            )
        }
        if !output.unread.isEmpty {
            result.violations.append(
                "unverifiable: the mock deleted output events before they were read: "
                    + output.unread.prefix(5).joined(separator: ", ")
            )
        }
        return result
    }

    /// `json` with every RFC 3339 timestamp (with an offset) written as UTC seconds since 1970, parsed, so that two
    /// rows equal but for the zone their timestamps are written in compare equal.
    package static func instantsNormalized(_ json: String) -> NSDictionary? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            return nil
        }
        return object.mapValues { value -> Any in
            guard let text = value as? String, let instant = Self.instant(text) else { return value }
            return instant
        } as NSDictionary
    }

    /// `2026-11-23T23:30:01.123456+00:00` (or `Z`, any offset, any number of fractional digits) as UTC seconds since
    /// 1970 and the fraction's digits, e.g. `1795478401.123456`; nil for any other text.
    package static func instant(_ text: String) -> String? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 20, utf8[4] == UInt8(ascii: "-"), utf8[10] == UInt8(ascii: "T"),
            utf8[13] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: utf8[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var fraction = ""
        if utf8[index] == UInt8(ascii: ".") {
            index += 1
            while index < utf8.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[index]) {
                fraction.append(Character(UnicodeScalar(utf8[index])))
                index += 1
            }
        }
        var offset = 0
        if index == utf8.count - 1, utf8[index] == UInt8(ascii: "Z") {
            offset = 0
        } else if index == utf8.count - 6, let hours = number(index + 1..<index + 3),
            let minutes = number(index + 4..<index + 6)
        {
            let magnitude: Int = hours * 3_600 + minutes * 60
            offset = utf8[index] == UInt8(ascii: "-") ? -magnitude : magnitude
        } else {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components) else { return nil }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let seconds: Int = Int(date.timeIntervalSince1970) - offset
        return fraction.isEmpty ? "\(seconds)" : "\(seconds).\(fraction)"
    }
}

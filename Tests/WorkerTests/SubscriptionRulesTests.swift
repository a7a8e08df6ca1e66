import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import KafkaClient
import NotificationStore
import PipelineContract
import StoreTestSupport
import Testing
import Worker
import X509

/// The sequences of Docs/entitlement.md, signed by a test PKI and posted through the raw topic to two workers,
/// shuffled with duplicates: each subscription's row, and the state topic's last event of it, must end in the state
/// the table says.
@Suite("Subscription state by Apple's meaning: every sequence of Docs/entitlement.md through the workers")
struct SubscriptionRulesTests {
    static let day: Int64 = 86_400_000

    /// One documented sequence: its notifications (in Apple's order) and what the row must say at the end.
    struct Sequence: Sendable {
        var name: String
        var key: String
        var events: [SubscriptionEvent]
        var expected: Expected
    }

    struct Expected: Sendable {
        var entitled: Bool?
        /// Milliseconds since 1970; nil: none.
        var entitledUntil: Int64?
        var transactionId: String
        var productId: String
        var lastNotificationType: String
        var revoked = false
        var appAccountToken: String?
        var ownership = "PURCHASED"
    }

    /// An event of subscription `key` signed at `at`, about transaction `transaction`.
    static func event(
        _ type: NotificationType,
        _ subtype: NotificationSubtype? = nil,
        key: String,
        transaction: String,
        product: String = "com.example.notes.pro.monthly",
        at signedDate: Int64,
        purchased: Int64,
        expires: Int64,
        configure: (inout SubscriptionEvent) -> Void = { _ in }
    ) -> SubscriptionEvent {
        var event = SubscriptionEvent(
            notificationType: type,
            subtype: subtype,
            notificationUUID: UUID().uuidString.lowercased(),
            signedDate: signedDate,
            bundleId: Fixtures.bundleId,
            appAppleId: Fixtures.appAppleId,
            originalTransactionId: key,
            transactionId: transaction,
            productId: product,
            purchaseDate: purchased,
            expiresDate: expires
        )
        configure(&event)
        return event
    }

    /// The sequences, relative to `now` (milliseconds since 1970): periods that run now end in the future.
    static func sequences(now: Int64) -> [Sequence] {
        let day = Self.day
        // A monthly period that ended ten days ago (A), and the renewal that runs now (B).
        let (aStart, aEnd) = (now - 40 * day, now - 10 * day)
        let (bStart, bEnd) = (aEnd, aEnd + 30 * day)
        var sequences: [Sequence] = []

        func renewedThen(
            _ name: String,
            key: String,
            last: (SubscriptionEvent) -> SubscriptionEvent
        ) -> Sequence {
            let bought = event(.subscribed, .initialBuy, key: key, transaction: key, at: aStart, purchased: aStart,
                expires: aEnd) { $0.appAccountToken = "6f1b2d3c-0000-4000-8000-0000000000\(key.suffix(2))" }
            var renewed = event(.didRenew, key: key, transaction: "\(key)-b", at: bStart, purchased: bStart,
                expires: bEnd)
            renewed.appAccountToken = bought.appAccountToken
            return Sequence(
                name: name,
                key: key,
                events: [bought, renewed, last(bought)],
                expected: Expected(entitled: true, entitledUntil: bEnd, transactionId: "\(key)-b",
                    productId: "com.example.notes.pro.monthly", lastNotificationType: "",
                    appAccountToken: bought.appAccountToken)
            )
        }
        // A consumption request about the earlier period, while the renewal runs: Apple's status is active and its
        // renewal info's renewalDate is the current period's end.
        var consumption = renewedThen("a consumption request about an earlier renewal", key: "7100000001") { bought in
            var request = bought
            request.notificationType = .consumptionRequest
            request.subtype = nil
            request.notificationUUID = UUID().uuidString.lowercased()
            request.signedDate = now - day
            request.renewalDate = bEnd
            return request
        }
        consumption.expected.lastNotificationType = "CONSUMPTION_REQUEST"
        sequences.append(consumption)
        var refund = renewedThen("a refund of an earlier renewal", key: "7100000002") { bought in
            var refunded = bought
            refunded.notificationType = .refund
            refunded.subtype = nil
            refunded.notificationUUID = UUID().uuidString.lowercased()
            refunded.signedDate = now - day
            refunded.revocationDate = now - day
            refunded.status = .active
            refunded.renewalDate = bEnd
            return refunded
        }
        refund.expected.lastNotificationType = "REFUND"
        sequences.append(refund)

        // An upgrade to the yearly plan, then the old monthly purchase refunded.
        do {
            let key = "7100000003"
            let upgradeAt = aStart + 5 * day
            let yearlyEnd = upgradeAt + 365 * day
            let monthly = event(.subscribed, .initialBuy, key: key, transaction: key, at: aStart, purchased: aStart,
                expires: aStart + 30 * day)
            let upgraded = event(.didChangeRenewalPref, .upgrade, key: key, transaction: "\(key)-y",
                product: "com.example.notes.pro.yearly", at: upgradeAt, purchased: upgradeAt, expires: yearlyEnd) {
                    $0.price = 49990
                }
            let refunded = event(.refund, key: key, transaction: key, at: now - day, purchased: aStart,
                expires: aStart + 30 * day) {
                    $0.revocationDate = now - day
                    $0.status = .active
                    $0.renewalDate = yearlyEnd
                    $0.autoRenewProductId = "com.example.notes.pro.yearly"
                }
            sequences.append(Sequence(name: "an upgrade, then the old plan refunded", key: key,
                events: [monthly, upgraded, refunded],
                expected: Expected(entitled: true, entitledUntil: yearlyEnd, transactionId: "\(key)-y",
                    productId: "com.example.notes.pro.yearly", lastNotificationType: "REFUND")))
        }

        // Billing trouble: a grace period (entitled until its end), then recovered; retry without grace.
        do {
            let graceEnd = now + 6 * day
            for (key, recovers) in [("7100000004", false), ("7100000005", true)] {
                let bought = event(.subscribed, .initialBuy, key: key, transaction: key, at: aStart,
                    purchased: aStart, expires: aEnd)
                let failed = event(.didFailToRenew, .gracePeriod, key: key, transaction: key, at: aEnd,
                    purchased: aStart, expires: aEnd) {
                        $0.status = .billingGracePeriod
                        $0.isInBillingRetryPeriod = true
                        $0.gracePeriodExpiresDate = graceEnd
                    }
                var events = [bought, failed]
                var expected = Expected(entitled: true, entitledUntil: graceEnd, transactionId: key,
                    productId: "com.example.notes.pro.monthly", lastNotificationType: "DID_FAIL_TO_RENEW")
                if recovers {
                    events.append(event(.didRenew, .billingRecovery, key: key, transaction: "\(key)-b",
                        at: now - day, purchased: now - day, expires: now + 29 * day))
                    expected = Expected(entitled: true, entitledUntil: now + 29 * day, transactionId: "\(key)-b",
                        productId: "com.example.notes.pro.monthly", lastNotificationType: "DID_RENEW")
                }
                sequences.append(Sequence(
                    name: recovers ? "a grace period, then billing recovery" : "a billing grace period",
                    key: key, events: events, expected: expected))
            }
            let key = "7100000006"
            sequences.append(Sequence(name: "billing retry without a grace period", key: key,
                events: [
                    event(.subscribed, .initialBuy, key: key, transaction: key, at: aStart, purchased: aStart,
                        expires: aEnd),
                    event(.didFailToRenew, key: key, transaction: key, at: aEnd, purchased: aStart, expires: aEnd) {
                        $0.status = .billingRetry
                        $0.isInBillingRetryPeriod = true
                    },
                ],
                expected: Expected(entitled: false, entitledUntil: nil, transactionId: key,
                    productId: "com.example.notes.pro.monthly", lastNotificationType: "DID_FAIL_TO_RENEW")))
        }

        // Family sharing revoked; expired; the only period refunded, then the refund reversed (and not reversed).
        do {
            let key = "7100000007"
            let shared = { (event: inout SubscriptionEvent) in event.inAppOwnershipType = .familyShared }
            sequences.append(Sequence(name: "family sharing revoked", key: key,
                events: [
                    event(.subscribed, .initialBuy, key: key, transaction: key, at: bStart, purchased: bStart,
                        expires: bEnd, configure: shared),
                    event(.revoke, key: key, transaction: key, at: now - day, purchased: bStart, expires: bEnd) {
                        shared(&$0)
                        $0.revocationDate = now - day
                    },
                ],
                expected: Expected(entitled: false, entitledUntil: nil, transactionId: key,
                    productId: "com.example.notes.pro.monthly", lastNotificationType: "REVOKE", revoked: true,
                    ownership: "FAMILY_SHARED")))
        }
        do {
            let key = "7100000008"
            sequences.append(Sequence(name: "expired", key: key,
                events: [
                    event(.subscribed, .initialBuy, key: key, transaction: key, at: aStart, purchased: aStart,
                        expires: aEnd),
                    event(.didChangeRenewalStatus, .autoRenewDisabled, key: key, transaction: key, at: aStart + day,
                        purchased: aStart, expires: aEnd) { $0.autoRenewStatus = .off },
                    event(.expired, .voluntary, key: key, transaction: key, at: aEnd, purchased: aStart,
                        expires: aEnd) {
                            $0.autoRenewStatus = .off
                            $0.status = .expired
                        },
                ],
                expected: Expected(entitled: false, entitledUntil: nil, transactionId: key,
                    productId: "com.example.notes.pro.monthly", lastNotificationType: "EXPIRED")))
        }
        for (key, reversed) in [("7100000009", true), ("7100000010", false)] {
            let bought = event(.subscribed, .initialBuy, key: key, transaction: key, at: bStart, purchased: bStart,
                expires: bEnd)
            let refunded = event(.refund, key: key, transaction: key, at: now - 2 * day, purchased: bStart,
                expires: bEnd) { $0.revocationDate = now - 2 * day }
            var events = [bought, refunded]
            if reversed {
                events.append(event(.refundReversed, key: key, transaction: key, at: now - day, purchased: bStart,
                    expires: bEnd))
            }
            sequences.append(Sequence(
                name: reversed ? "the only period refunded, then the refund reversed" : "the only period refunded",
                key: key, events: events,
                expected: Expected(entitled: reversed, entitledUntil: reversed ? bEnd : nil, transactionId: key,
                    productId: "com.example.notes.pro.monthly",
                    lastNotificationType: reversed ? "REFUND_REVERSED" : "REFUND", revoked: !reversed)))
        }

        // One-time purchases: a non-consumable (bought; refunded), a consumable.
        for (key, type, refunded) in [
            ("7100000011", ProductType.nonConsumable, false), ("7100000012", .nonConsumable, true),
            ("7100000013", .consumable, false),
        ] {
            let product = type == .consumable ? "com.example.notes.coins" : "com.example.notes.lifetime"
            let once = { (event: inout SubscriptionEvent) in
                event.productType = type
                event.appAccountToken = "0a0b0c0d-0000-4000-8000-0000000000\(key.suffix(2))"
            }
            var events = [
                event(.oneTimeCharge, key: key, transaction: key, product: product, at: aStart, purchased: aStart,
                    expires: aEnd, configure: once)
            ]
            if refunded {
                events.append(event(.refund, key: key, transaction: key, product: product, at: now - day,
                    purchased: aStart, expires: aEnd) {
                        once(&$0)
                        $0.revocationDate = now - day
                    })
            }
            sequences.append(Sequence(
                name: type == .consumable ? "a consumable bought" : refunded ? "a non-consumable refunded"
                    : "a non-consumable bought",
                key: key, events: events,
                expected: Expected(entitled: type == .nonConsumable && !refunded, entitledUntil: nil,
                    transactionId: key, productId: product,
                    lastNotificationType: refunded ? "REFUND" : "ONE_TIME_CHARGE", revoked: refunded,
                    appAccountToken: "0a0b0c0d-0000-4000-8000-0000000000\(key.suffix(2))")))
        }
        return sequences
    }

    /// A verifier directory that trusts `pki`'s root for the fixtures' app.
    static func verifiers(trusting pki: TestPKI) throws -> VerifierDirectory {
        VerifierDirectory(
            apps: [
                PipelineApp(name: "notes", bundleID: Fixtures.bundleId, appAppleID: Fixtures.appAppleId)
            ],
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: [pki.root]))
        )
    }

    /// Signs every sequence's notifications, then runs `body` on a rig whose two workers were given them all,
    /// shuffled, with a third of them twice (Apple's retries), once they are stored and published.
    static func withSequencesStored(
        _ body: (WorkerTestRig, [Sequence]) async throws -> Void
    ) async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let sequences = Self.sequences(now: Int64(Date().timeIntervalSince1970 * 1000))
        var generator = SystemRandomNumberGenerator()
        var bodies = try sequences.flatMap { try $0.events.map { try signer.body(for: $0) } }
        bodies += bodies.shuffled(using: &generator).prefix(bodies.count / 3)
        bodies.shuffle(using: &generator)
        let notifications = sequences.map(\.events.count).reduce(0, +)
        let input = bodies
        try await WorkerTestRig.run(partitions: 4, outputPartitions: 2, verifiers: try Self.verifiers(trusting: pki)) {
            rig, startWorker in
            _ = try startWorker()
            _ = try startWorker()
            let reports = await rig.producer.send(contentsOf: input.map { WorkerPipelineTests.rawMessage($0) })
            #expect(reports.allSatisfy { (try? $0.get()) != nil })
            try await rig.expectRows(notifications: notifications, rejected: 0)
            try await rig.expectOutputsReconciled("every state event is its row")
            try await body(rig, sequences)
        }
    }

    /// Each subscription's row as `key|entitled|entitled_until (ms)|transaction|product|last type|revoked|account
    /// token|ownership|has_access`.
    static func rows(_ rig: WorkerTestRig) async throws -> [String: [String]] {
        let rows = try await rig.server.psql(
            rig.database.database,
            """
            SELECT s.original_transaction_id || '|' || coalesce(s.entitled::text, '') || '|'
                || coalesce((extract(epoch FROM s.entitled_until) * 1000)::bigint::text, '') || '|'
                || s.transaction_id || '|' || s.product_id || '|' || s.last_notification_type || '|'
                || (s.revocation_date IS NOT NULL)::text || '|' || coalesce(s.app_account_token, '') || '|'
                || coalesce(s.in_app_ownership_type, '') || '|' || a.has_access::text
            FROM subscriptions s JOIN subscription_access a USING (original_transaction_id)
            """
        )
        var found: [String: [String]] = [:]
        for line in rows.split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            found[cells[0]] = cells
        }
        return found
    }

    /// Expects every sequence's row to say what its table row in Docs/entitlement.md says.
    static func expectDocumentedStates(_ rig: WorkerTestRig, _ sequences: [Sequence]) async throws {
        let found = try await rows(rig)
        #expect(found.count == sequences.count)
        for sequence in sequences {
            let expected = sequence.expected
            let cells = try #require(found[sequence.key], "\(sequence.name): no row")
            let wanted = [
                sequence.key, expected.entitled.map(String.init) ?? "", expected.entitledUntil.map(String.init) ?? "",
                expected.transactionId, expected.productId, expected.lastNotificationType,
                String(expected.revoked), expected.appAccountToken ?? "", expected.ownership,
                String(expected.entitled == true),
            ]
            #expect(cells == wanted, "\(sequence.name)")
        }
    }

    @Test("each sequence, shuffled with duplicates, ends in its documented state, on the row and the state topic")
    func sequencesThroughWorkers() async throws {
        try await Self.withSequencesStored { rig, sequences in
            try await Self.expectDocumentedStates(rig, sequences)
        }
    }

    @Test(
        """
        a database the writer before version 8 left, its states published: migrating rebuilds every row as the \
        writer now stores it, and the state topic ends on the corrected rows
        """
    )
    func migratingStoredStates() async throws {
        try await Self.withSequencesStored { rig, sequences in
            let (server, database) = (rig.server, rig.database.database)
            let snapshot = """
                SELECT string_agg(original_transaction_id || ' ' || (to_jsonb(s) - 'updated_at')::text, E'\\n'
                    ORDER BY original_transaction_id) FROM subscriptions s
                """
            let byRules = try await server.psql(database, snapshot)
            // As the writer before version 8 left them, and as it published them.
            try await server.psql(
                database,
                """
                \(SchemaRollback.subscriptionStateRules)
                \(SchemaRollback.subscriptionsAsBeforeStateRules)
                INSERT INTO outbox (stream, message_key, notification_uuid, source_topic, source_partition)
                SELECT 'subscription_state', s.original_transaction_id, s.last_notification_uuid, n.kafka_topic,
                    n.kafka_partition
                FROM subscriptions s JOIN notifications n ON n.notification_uuid = s.last_notification_uuid;
                """
            )
            try await rig.expectOutputsReconciled("the earlier writer's states published")
            let before = try await server.psql(
                database,
                """
                SELECT transaction_id || '|' || coalesce(entitled::text, '') FROM subscriptions
                WHERE original_transaction_id = '7100000001'
                """
            )
            #expect(before == "7100000001|true", "the earlier writer rewound the purchase: \(before)")

            let report = try await rig.store.migrate()
            #expect(report.applied.map(\.version) == [8])
            try await rig.expectOutputsReconciled("the corrected states published")
            #expect(try await server.psql(database, snapshot) == byRules)
            try await Self.expectDocumentedStates(rig, sequences)
        }
    }
}

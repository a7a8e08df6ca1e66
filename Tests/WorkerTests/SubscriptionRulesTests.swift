import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import KafkaClient
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing
import Worker
import X509

/// The sequences of Docs/entitlement.md, signed by a test PKI and posted through the raw topic to two workers,
/// shuffled with duplicates: each subscription's row, and the state topic's last event of it, must end in the state
/// the table says.
@Suite(
    "Subscription state by Apple's meaning: every sequence of Docs/entitlement.md through the workers",
    .tags(.pipeline)
)
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
        /// Further columns of the row, as `psql` prints them (`column::text`).
        var columns: [String: String] = [:]
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
        // The subscription's first purchase (SUBSCRIBED, INITIAL_BUY), its transaction the original one.
        func subscribed(
            _ key: String,
            from start: Int64,
            to end: Int64,
            configure: (inout SubscriptionEvent) -> Void = { _ in }
        ) -> SubscriptionEvent {
            event(
                .subscribed,
                .initialBuy,
                key: key,
                transaction: key,
                at: start,
                purchased: start,
                expires: end,
                configure: configure
            )
        }

        // Bought (A), renewed (B, running now), then `type` about the earlier period A while B runs: Apple's status
        // is active and its renewal info's renewalDate is the current period's end.
        func aboutEarlierPeriod(_ name: String, key: String, _ type: NotificationType, refunded: Bool) -> Sequence {
            let bought = subscribed(key, from: aStart, to: aEnd) {
                $0.appAccountToken = "6f1b2d3c-0000-4000-8000-0000000000\(key.suffix(2))"
            }
            var renewed = event(
                .didRenew,
                key: key,
                transaction: "\(key)-b",
                at: bStart,
                purchased: bStart,
                expires: bEnd
            )
            renewed.appAccountToken = bought.appAccountToken
            var later = bought
            later.notificationType = type
            later.subtype = nil
            later.notificationUUID = UUID().uuidString.lowercased()
            later.signedDate = now - day
            later.status = .active
            later.renewalDate = bEnd
            later.revocationDate = refunded ? now - day : nil
            return Sequence(
                name: name,
                key: key,
                events: [bought, renewed, later],
                expected: Expected(
                    entitled: true,
                    entitledUntil: bEnd,
                    transactionId: "\(key)-b",
                    productId: "com.example.notes.pro.monthly",
                    lastNotificationType: type.rawValue,
                    appAccountToken: bought.appAccountToken
                )
            )
        }
        sequences.append(
            aboutEarlierPeriod(
                "a consumption request about an earlier renewal",
                key: "7100000001",
                .consumptionRequest,
                refunded: false
            )
        )
        sequences.append(
            aboutEarlierPeriod("a refund of an earlier renewal", key: "7100000002", .refund, refunded: true)
        )

        // An upgrade to the yearly plan, then the old monthly purchase refunded.
        do {
            let key = "7100000003"
            let upgradeAt = aStart + 5 * day
            let yearlyEnd = upgradeAt + 365 * day
            let monthly = event(
                .subscribed,
                .initialBuy,
                key: key,
                transaction: key,
                at: aStart,
                purchased: aStart,
                expires: aStart + 30 * day
            )
            let upgraded = event(
                .didChangeRenewalPref,
                .upgrade,
                key: key,
                transaction: "\(key)-y",
                product: "com.example.notes.pro.yearly",
                at: upgradeAt,
                purchased: upgradeAt,
                expires: yearlyEnd
            ) {
                $0.price = 49990
            }
            let refunded = event(
                .refund,
                key: key,
                transaction: key,
                at: now - day,
                purchased: aStart,
                expires: aStart + 30 * day
            ) {
                $0.revocationDate = now - day
                $0.status = .active
                $0.renewalDate = yearlyEnd
                $0.autoRenewProductId = "com.example.notes.pro.yearly"
            }
            sequences.append(
                Sequence(
                    name: "an upgrade, then the old plan refunded",
                    key: key,
                    events: [monthly, upgraded, refunded],
                    expected: Expected(
                        entitled: true,
                        entitledUntil: yearlyEnd,
                        transactionId: "\(key)-y",
                        productId: "com.example.notes.pro.yearly",
                        lastNotificationType: "REFUND"
                    )
                )
            )
        }

        // Billing trouble: a grace period (entitled until its end), then recovered; retry without grace.
        do {
            let graceEnd = now + 6 * day
            for (key, recovers) in [("7100000004", false), ("7100000005", true)] {
                let bought = subscribed(key, from: aStart, to: aEnd)
                let failed = event(
                    .didFailToRenew,
                    .gracePeriod,
                    key: key,
                    transaction: key,
                    at: aEnd,
                    purchased: aStart,
                    expires: aEnd
                ) {
                    $0.status = .billingGracePeriod
                    $0.isInBillingRetryPeriod = true
                    $0.gracePeriodExpiresDate = graceEnd
                }
                var events = [bought, failed]
                var expected = Expected(
                    entitled: true,
                    entitledUntil: graceEnd,
                    transactionId: key,
                    productId: "com.example.notes.pro.monthly",
                    lastNotificationType: "DID_FAIL_TO_RENEW"
                )
                if recovers {
                    events.append(
                        event(
                            .didRenew,
                            .billingRecovery,
                            key: key,
                            transaction: "\(key)-b",
                            at: now - day,
                            purchased: now - day,
                            expires: now + 29 * day
                        )
                    )
                    expected = Expected(
                        entitled: true,
                        entitledUntil: now + 29 * day,
                        transactionId: "\(key)-b",
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "DID_RENEW"
                    )
                }
                sequences.append(
                    Sequence(
                        name: recovers ? "a grace period, then billing recovery" : "a billing grace period",
                        key: key,
                        events: events,
                        expected: expected
                    )
                )
            }
            let key = "7100000006"
            sequences.append(
                Sequence(
                    name: "billing retry without a grace period",
                    key: key,
                    events: [
                        subscribed(key, from: aStart, to: aEnd),
                        event(.didFailToRenew, key: key, transaction: key, at: aEnd, purchased: aStart, expires: aEnd) {
                            $0.status = .billingRetry
                            $0.isInBillingRetryPeriod = true
                        },
                    ],
                    expected: Expected(
                        entitled: false,
                        entitledUntil: nil,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "DID_FAIL_TO_RENEW"
                    )
                )
            )
        }

        // Family sharing revoked; expired; the only period refunded, then the refund reversed (and not reversed).
        do {
            let key = "7100000007"
            let shared = { (event: inout SubscriptionEvent) in event.inAppOwnershipType = .familyShared }
            sequences.append(
                Sequence(
                    name: "family sharing revoked",
                    key: key,
                    events: [
                        subscribed(key, from: bStart, to: bEnd, configure: shared),
                        event(.revoke, key: key, transaction: key, at: now - day, purchased: bStart, expires: bEnd) {
                            shared(&$0)
                            $0.revocationDate = now - day
                        },
                    ],
                    expected: Expected(
                        entitled: false,
                        entitledUntil: nil,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "REVOKE",
                        revoked: true,
                        ownership: "FAMILY_SHARED"
                    )
                )
            )
        }
        do {
            let key = "7100000008"
            sequences.append(
                Sequence(
                    name: "expired",
                    key: key,
                    events: [
                        subscribed(key, from: aStart, to: aEnd),
                        event(
                            .didChangeRenewalStatus,
                            .autoRenewDisabled,
                            key: key,
                            transaction: key,
                            at: aStart + day,
                            purchased: aStart,
                            expires: aEnd
                        ) { $0.autoRenewStatus = .off },
                        event(
                            .expired,
                            .voluntary,
                            key: key,
                            transaction: key,
                            at: aEnd,
                            purchased: aStart,
                            expires: aEnd
                        ) {
                            $0.autoRenewStatus = .off
                            $0.status = .expired
                        },
                    ],
                    expected: Expected(
                        entitled: false,
                        entitledUntil: nil,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "EXPIRED"
                    )
                )
            )
        }
        for (key, reversed) in [("7100000009", true), ("7100000010", false)] {
            let bought = subscribed(key, from: bStart, to: bEnd)
            let refunded = event(
                .refund,
                key: key,
                transaction: key,
                at: now - 2 * day,
                purchased: bStart,
                expires: bEnd
            ) { $0.revocationDate = now - 2 * day }
            var events = [bought, refunded]
            if reversed {
                events.append(
                    event(
                        .refundReversed,
                        key: key,
                        transaction: key,
                        at: now - day,
                        purchased: bStart,
                        expires: bEnd
                    )
                )
            }
            sequences.append(
                Sequence(
                    name: reversed ? "the only period refunded, then the refund reversed" : "the only period refunded",
                    key: key,
                    events: events,
                    expected: Expected(
                        entitled: reversed,
                        entitledUntil: reversed ? bEnd : nil,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: reversed ? "REFUND_REVERSED" : "REFUND",
                        revoked: !reversed
                    )
                )
            )
        }

        // The remaining rows of the table: a downgrade (the next renewal's product only), the grace period
        // expired, an extended renewal date (newer word of the current transaction), a refund declined.
        do {
            let key = "7100000014"
            sequences.append(
                Sequence(
                    name: "a downgrade: the next renewal's product changes, the current purchase stays",
                    key: key,
                    events: [
                        subscribed(key, from: bStart, to: bEnd),
                        event(
                            .didChangeRenewalPref,
                            .downgrade,
                            key: key,
                            transaction: key,
                            at: now - day,
                            purchased: bStart,
                            expires: bEnd
                        ) {
                            $0.autoRenewProductId = "com.example.notes.basic.monthly"
                        },
                    ],
                    expected: Expected(
                        columns: ["auto_renew_product_id": "com.example.notes.basic.monthly"],
                        entitled: true,
                        entitledUntil: bEnd,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "DID_CHANGE_RENEWAL_PREF"
                    )
                )
            )
        }
        do {
            let key = "7100000015"
            sequences.append(
                Sequence(
                    name: "the billing grace period expired",
                    key: key,
                    events: [
                        subscribed(key, from: aStart, to: aEnd),
                        event(
                            .didFailToRenew,
                            .gracePeriod,
                            key: key,
                            transaction: key,
                            at: aEnd,
                            purchased: aStart,
                            expires: aEnd
                        ) {
                            $0.status = .billingGracePeriod
                            $0.isInBillingRetryPeriod = true
                            $0.gracePeriodExpiresDate = now - day
                        },
                        event(
                            .gracePeriodExpired,
                            key: key,
                            transaction: key,
                            at: now - day,
                            purchased: aStart,
                            expires: aEnd
                        ) {
                            $0.status = .billingRetry
                            $0.isInBillingRetryPeriod = true
                        },
                    ],
                    expected: Expected(
                        columns: ["status": "3", "is_in_billing_retry": "true", "grace_period_expires_date": ""],
                        entitled: false,
                        entitledUntil: nil,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "GRACE_PERIOD_EXPIRED"
                    )
                )
            )
        }
        do {
            let key = "7100000016"
            let extended = bEnd + 7 * day
            sequences.append(
                Sequence(
                    name: "the renewal date extended: newer word of the current transaction",
                    key: key,
                    events: [
                        subscribed(key, from: bStart, to: bEnd),
                        event(
                            .renewalExtended,
                            key: key,
                            transaction: key,
                            at: now - day,
                            purchased: bStart,
                            expires: extended
                        ),
                    ],
                    expected: Expected(
                        columns: ["expires_date": String(extended)],
                        entitled: true,
                        entitledUntil: extended,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "RENEWAL_EXTENDED"
                    )
                )
            )
        }
        do {
            let key = "7100000017"
            sequences.append(
                Sequence(
                    name: "a refund requested, then declined",
                    key: key,
                    events: [
                        subscribed(key, from: bStart, to: bEnd),
                        event(
                            .consumptionRequest,
                            key: key,
                            transaction: key,
                            at: now - 2 * day,
                            purchased: bStart,
                            expires: bEnd
                        ),
                        event(
                            .refundDeclined,
                            key: key,
                            transaction: key,
                            at: now - day,
                            purchased: bStart,
                            expires: bEnd
                        ),
                    ],
                    expected: Expected(
                        entitled: true,
                        entitledUntil: bEnd,
                        transactionId: key,
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "REFUND_DECLINED"
                    )
                )
            )
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
                event(
                    .oneTimeCharge,
                    key: key,
                    transaction: key,
                    product: product,
                    at: aStart,
                    purchased: aStart,
                    expires: aEnd,
                    configure: once
                )
            ]
            if refunded {
                events.append(
                    event(
                        .refund,
                        key: key,
                        transaction: key,
                        product: product,
                        at: now - day,
                        purchased: aStart,
                        expires: aEnd
                    ) {
                        once(&$0)
                        $0.revocationDate = now - day
                    }
                )
            }
            sequences.append(
                Sequence(
                    name: type == .consumable
                        ? "a consumable bought"
                        : refunded
                            ? "a non-consumable refunded"
                            : "a non-consumable bought",
                    key: key,
                    events: events,
                    expected: Expected(
                        entitled: type == .nonConsumable && !refunded,
                        entitledUntil: nil,
                        transactionId: key,
                        productId: product,
                        lastNotificationType: refunded ? "REFUND" : "ONE_TIME_CHARGE",
                        revoked: refunded,
                        appAccountToken: "0a0b0c0d-0000-4000-8000-0000000000\(key.suffix(2))"
                    )
                )
            )
        }
        return sequences
    }

    /// A V1 sequence: bodies as Apple posts them (plain JSON, values as strings) and what the row must say.
    struct V1Sequence: Sendable {
        var name: String
        var key: String
        var bodies: [String]
        var expected: Expected
    }

    /// A V1 receipt entry (`latest_receipt_info` element).
    static func v1Entry(
        key: String,
        transaction: String,
        product: String = "com.example.notes.pro.monthly",
        purchased: Int64,
        expires: Int64,
        cancelled: Int64? = nil
    ) -> [String: String] {
        var entry = [
            "original_transaction_id": key, "transaction_id": transaction, "product_id": product, "quantity": "1",
            "purchase_date_ms": String(purchased), "original_purchase_date_ms": String(purchased),
            "expires_date_ms": String(expires), "web_order_line_item_id": "9\(transaction.suffix(8))",
            "in_app_ownership_type": "PURCHASED", "subscription_group_identifier": "21000001",
        ]
        if let cancelled {
            entry["cancellation_date_ms"] = String(cancelled)
            entry["cancellation_reason"] = "0"
        }
        return entry
    }

    /// A V1 body: `type` about the subscription `key` (top level, unless `topLevelKey` is false), with the receipt's
    /// `entries` and `pending` renewal info, and `extra` top-level members.
    static func v1Body(
        _ type: String,
        key: String,
        topLevelKey: Bool = true,
        entries: [[String: String]],
        pending: [[String: Any]],
        extra: [String: Any] = [:]
    ) throws -> String {
        var body: [String: Any] = [
            "environment": "Sandbox", "notification_type": type, "password": Fixtures.sharedSecret,
            "auto_renew_product_id": "com.example.notes.pro.monthly", "bid": Fixtures.bundleId, "bvrs": "42",
            "unified_receipt": [
                "environment": "Sandbox", "latest_receipt": "MIIT\(key)", "status": 0,
                "latest_receipt_info": entries, "pending_renewal_info": pending,
            ] as [String: Any],
        ]
        if topLevelKey { body["original_transaction_id"] = key }
        body.merge(extra) { $1 }
        return String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The V1 sequences, relative to `now`: bought then renewed; cancelled; billing retry (an integer
    /// `expiration_intent`, as Apple's reference declares it); keyed without a top-level id, the receipt listing
    /// another subscription first.
    static func v1Sequences(now: Int64) throws -> [V1Sequence] {
        let day = Self.day
        let (aStart, aEnd) = (now - 40 * day, now - 10 * day)
        let (bStart, bEnd) = (aEnd, aEnd + 30 * day)
        let renews: [String: Any] = [
            "auto_renew_status": "1", "auto_renew_product_id": "com.example.notes.pro.monthly",
        ]
        func pending(_ key: String, _ members: [String: Any] = [:]) -> [[String: Any]] {
            [
                renews.merging(["original_transaction_id": key, "product_id": "com.example.notes.pro.monthly"]) { $1 }
                    .merging(members) { $1 }
            ]
        }
        var sequences: [V1Sequence] = []
        do {
            let key = "7200000001"
            let a = v1Entry(key: key, transaction: "\(key)-a", purchased: aStart, expires: aEnd)
            let b = v1Entry(key: key, transaction: "\(key)-b", purchased: bStart, expires: bEnd)
            sequences.append(
                V1Sequence(
                    name: "V1: bought, then renewed",
                    key: key,
                    bodies: [
                        try v1Body("INITIAL_BUY", key: key, entries: [a], pending: pending(key)),
                        try v1Body("DID_RENEW", key: key, entries: [b, a], pending: pending(key)),
                    ],
                    expected: Expected(
                        entitled: true,
                        entitledUntil: bEnd,
                        transactionId: "\(key)-b",
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "DID_RENEW"
                    )
                )
            )
        }
        do {
            let key = "7200000002"
            let bought = v1Entry(key: key, transaction: "\(key)-a", purchased: bStart, expires: bEnd)
            let cancelled = v1Entry(
                key: key,
                transaction: "\(key)-a",
                purchased: bStart,
                expires: bEnd,
                cancelled: now - day
            )
            sequences.append(
                V1Sequence(
                    name: "V1: cancelled (refunded by Apple support)",
                    key: key,
                    bodies: [
                        try v1Body("INITIAL_BUY", key: key, entries: [bought], pending: pending(key)),
                        try v1Body(
                            "CANCEL",
                            key: key,
                            entries: [cancelled],
                            pending: pending(key, ["auto_renew_status": "0"]),
                            extra: ["cancellation_date_ms": String(now - day), "auto_renew_status": "false"]
                        ),
                    ],
                    expected: Expected(
                        entitled: false,
                        entitledUntil: nil,
                        transactionId: "\(key)-a",
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "CANCEL",
                        revoked: true
                    )
                )
            )
        }
        do {
            let key = "7200000003"
            let a = v1Entry(key: key, transaction: "\(key)-a", purchased: aStart, expires: aEnd)
            sequences.append(
                V1Sequence(
                    name: "V1: billing retry, expiration_intent a number",
                    key: key,
                    bodies: [
                        try v1Body("INITIAL_BUY", key: key, entries: [a], pending: pending(key)),
                        try v1Body(
                            "DID_FAIL_TO_RENEW",
                            key: key,
                            entries: [a],
                            pending: pending(key, ["is_in_billing_retry_period": "1", "expiration_intent": 2])
                        ),
                    ],
                    expected: Expected(
                        entitled: false,
                        entitledUntil: nil,
                        transactionId: "\(key)-a",
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "DID_FAIL_TO_RENEW"
                    )
                )
            )
        }
        do {
            // No top-level original_transaction_id: the receipt lists the app's latest transactions, another
            // subscription's first; the notification's product picks this one.
            let key = "7200000004"
            let other = v1Entry(
                key: "7299999999",
                transaction: "7299999999-a",
                product: "com.example.notes.coins.sub",
                purchased: now - day,
                expires: now + 29 * day
            )
            let a = v1Entry(key: key, transaction: "\(key)-a", purchased: bStart, expires: bEnd)
            let otherPending: [String: Any] = [
                "original_transaction_id": "7299999999", "product_id": "com.example.notes.coins.sub",
                "auto_renew_product_id": "com.example.notes.coins.sub", "auto_renew_status": "1",
            ]
            sequences.append(
                V1Sequence(
                    name: "V1: keyed by its product, not the receipt's first entry",
                    key: key,
                    bodies: [
                        try v1Body(
                            "INITIAL_BUY",
                            key: key,
                            topLevelKey: false,
                            entries: [other, a],
                            pending: [otherPending] + pending(key)
                        )
                    ],
                    expected: Expected(
                        entitled: true,
                        entitledUntil: bEnd,
                        transactionId: "\(key)-a",
                        productId: "com.example.notes.pro.monthly",
                        lastNotificationType: "INITIAL_BUY"
                    )
                )
            )
        }
        return sequences
    }

    /// A verifier directory that trusts `pki`'s root for the fixtures' app (and its V1 shared secret).
    static func verifiers(trusting pki: TestPKI) throws -> VerifierDirectory {
        WorkerPipelineTests.directory(trusting: pki.root)
    }

    /// Signs every sequence's notifications, then runs `body` on a rig whose two workers were given them all,
    /// shuffled, with a third of them twice (Apple's retries), once they are stored and published.
    static func withSequencesStored(
        _ body: (WorkerTestRig, [Sequence]) async throws -> Void
    ) async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let v1 = try Self.v1Sequences(now: now)
        let sequences =
            Self.sequences(now: now)
            + v1.map { Sequence(name: $0.name, key: $0.key, events: [], expected: $0.expected) }
        var generator = SystemRandomNumberGenerator()
        var messages = try sequences.flatMap {
            try $0.events.map { WorkerPipelineTests.rawMessage(try signer.body(for: $0)) }
        }
        messages += v1.flatMap { $0.bodies.map { WorkerPipelineTests.rawMessage($0, version: 1) } }
        // A TEST notification: stored, no subscription's (the table's last row).
        let test = ResponseBodyV2DecodedPayload(
            notificationType: .test,
            notificationUUID: UUID().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            data: NotificationData(appAppleId: Fixtures.appAppleId, bundleId: Fixtures.bundleId, environment: .sandbox)
        )
        messages.append(WorkerPipelineTests.rawMessage(try signer.body(for: test)))
        let notifications = messages.count
        messages += messages.shuffled(using: &generator).prefix(messages.count / 3)
        messages.shuffle(using: &generator)
        let input = messages
        try await WorkerTestRig.run(partitions: 4, outputPartitions: 2, verifiers: try Self.verifiers(trusting: pki)) {
            rig,
            startWorker in
            _ = try startWorker()
            _ = try startWorker()
            let reports = await rig.producer.send(contentsOf: input)
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
            for (column, value) in expected.columns.sorted(by: { $0.key < $1.key }) {
                let stored = try await rig.server.psql(
                    rig.database.database,
                    """
                    SELECT coalesce(CASE WHEN pg_typeof(\(column)) = 'timestamptz'::regtype
                        THEN (extract(epoch FROM \(column)::text::timestamptz) * 1000)::bigint::text
                        ELSE \(column)::text END, '')
                    FROM subscriptions WHERE original_transaction_id = '\(sequence.key)'
                    """
                )
                #expect(stored == value, "\(sequence.name): \(column)")
            }
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
                DELETE FROM subscriptions s USING notifications n
                WHERE n.notification_uuid = s.last_notification_uuid AND n.version = 1;
                -- It keyed a V1 body without a top-level id by the receipt's first entry: another subscription.
                UPDATE notifications SET original_transaction_id = '7299999999'
                WHERE version = 1 AND original_transaction_id = '7200000004';
                INSERT INTO outbox (stream, message_key, notification_uuid, source_topic, source_partition)
                SELECT 'subscription_state', s.original_transaction_id, s.last_notification_uuid, n.kafka_topic,
                    n.kafka_partition
                FROM subscriptions s JOIN notifications n ON n.notification_uuid = s.last_notification_uuid;
                """
            )
            // Published: the topic ends on the earlier writer's rows; it had none for V1 subscriptions, whose
            // states (from this writer) are the only ones left without a row.
            let published = try await OutputReconciliation.check(
                bootstrapServers: rig.outputMock.clusterConfiguration.bootstrapServers.joined(separator: ",")
            ) { try await server.psql(database, $0) }
            let v1Keys = try Self.v1Sequences(now: 0).count
            #expect(
                published.problems.count == 1 && published.problems[0].contains("of \(v1Keys) subscription(s)"),
                "\(published.problems)"
            )
            let before = try await server.psql(
                database,
                """
                SELECT transaction_id || '|' || coalesce(entitled::text, '') FROM subscriptions
                WHERE original_transaction_id = '7100000001'
                """
            )
            #expect(before == "7100000001|true", "the earlier writer rewound the purchase: \(before)")
            #expect(
                try await server.psql(
                    database,
                    "SELECT count(*) FROM subscriptions WHERE original_transaction_id LIKE '72%'"
                ) == "0"
            )

            let report = try await rig.store.migrate()
            #expect(report.applied.map(\.version) == [8])
            try await rig.expectOutputsReconciled("the corrected states published")
            #expect(try await server.psql(database, snapshot) == byRules)
            try await Self.expectDocumentedStates(rig, sequences)
        }
    }

    @Test("state republish re-seeds the state topic: what is published after it alone equals subscriptions")
    func republishReseeds() async throws {
        try await Self.withSequencesStored { rig, sequences in
            let (server, database) = (rig.server, rig.database.database)
            let bootstrap = rig.outputMock.clusterConfiguration.bootstrapServers.joined(separator: ",")
            // The topic as if lost here: nothing before these offsets is read.
            let lostUpTo = try await OutputReconciliation.endOffsets(
                OutputReconciliation.stateTopic,
                bootstrapServers: bootstrap
            )
            let nothingSince = try await OutputReconciliation.check(bootstrapServers: bootstrap, stateSince: lostUpTo) {
                try await server.psql(database, $0)
            }
            #expect(nothingSince.stateEvents == 0)
            #expect(!nothingSince.problems.isEmpty, "an emptied state topic is not the table")

            let some = try await rig.store.republishStates(keys: [sequences[0].key])
            #expect(some.count == 1)
            let queued = try await rig.store.republishStates()
            #expect(queued.count == sequences.count)
            let reseeded = try await OutputReconciliation.check(bootstrapServers: bootstrap, stateSince: lostUpTo) {
                try await server.psql(database, $0)
            }
            #expect(reseeded.problems.isEmpty, "\(reseeded.problems)")
            #expect(reseeded.stateEvents >= sequences.count, "one state a subscription at least")
            #expect(try await rig.store.unpublishedStates(of: queued) == 0)
        }
    }
}

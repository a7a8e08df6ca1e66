import AppStoreModels
import Crypto
import KafkaClient
import NotificationBodies
import PostgresRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A verified notification as the columns of `notifications`; dates in milliseconds since 1970.
package struct NotificationRow: Sendable {
    package var ordinal: Int32
    package var notificationUUID: UUID
    package var version: Int16
    package var notificationType: String
    package var subtype: String?
    package var environment: String?
    package var bundleId: String?
    package var appAppleId: Int64?
    package var originalTransactionId: String?
    package var transactionId: String?
    package var productId: String?
    package var signedDate: Int64?
    package var expiresDate: Int64?
    package var revocationDate: Int64?
    package var autoRenewStatus: Int16?
    /// `data.status`: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    package var status: Int16?
    package var gracePeriodExpiresDate: Int64?
    package var autoRenewProductId: String?
    /// In milliunits of ``currency``.
    package var price: Int64?
    package var currency: String?
    package var offerType: Int16?
    /// The state fields below feed `subscriptions` only (``SubscriptionStateRules``); dates in milliseconds.
    /// Whether the notification carried a transaction (V2 `signedTransactionInfo`, V1 a receipt entry of its
    /// subscription): only then may it move the subscription's current purchase.
    package var carriesTransaction: Bool
    /// Whether it carried renewal info (V2 `signedRenewalInfo`, V1 a `pending_renewal_info` entry).
    package var carriesRenewalInfo: Bool
    package var purchaseDate: Int64?
    /// The transaction's `type` (`Auto-Renewable Subscription`, `Non-Consumable`, ...).
    package var productType: String?
    package var revocationReason: Int16?
    package var inAppOwnershipType: String?
    package var subscriptionGroupIdentifier: String?
    /// The transaction's `appAccountToken`, else the renewal info's.
    package var appAccountToken: String?
    package var previousOriginalTransactionId: String?
    /// The renewal info's `renewalDate`: when the most recent auto-renewable purchase expires.
    package var renewalDate: Int64?
    package var isInBillingRetry: Bool?
    package var expirationIntent: Int16?
    /// Where the notification stands in its subscription's order: V2's `signedDate`; V1's latest reported moment
    /// (``StatusUpdateNotification/stateOrderMilliseconds``), as V1 has no signed date.
    package var stateDate: Int64?
    package var decoded: String
    /// The body as received (V1: its password redacted), packed for `notification_bodies`.
    package var body: PackedBody
    package var receivedAt: Int64
    package var source: KafkaTopicPartitionOffset
    /// The trace it arrived in, kept with its outbox rows.
    package var traceContext: TraceContext?
}

/// A body for `rejected_notifications`.
struct RejectedRow: Sendable {
    var ordinal: Int32
    var status: String
    var reason: String
    /// The body as received (V1: its password redacted), whole (``PackedBody/Format/verbatim``).
    var body: PackedBody
    var headers: String
    var receivedAt: Int64
    var key: String?
    var source: KafkaTopicPartitionOffset
    /// The trace it arrived in, kept with its dead letter's outbox row.
    var traceContext: TraceContext?
}

/// Why a verified notification cannot be stored as such; it is stored as rejected with this reason instead.
struct UnstorableNotification: Error {
    var reason: String
}

extension RejectedRow {
    /// The status of verified notifications that could not be stored as such.
    static let unstorableStatus = "UNSTORABLE"

    init(ordinal: Int32, status: String, reason: String, raw: RawNotification) {
        self.ordinal = ordinal
        self.status = PostgresText.replacingNUL(status)
        self.reason = PostgresText.replacingNUL(reason)
        // A V1 body carries the shared secret (even a wrong one is somebody's secret). Kept whole, not packed: a
        // rejected body's JWS headers are anybody's (forged ones each unique), and packing would keep them in
        // `jws_headers`, and in every reader's header cache, for good.
        self.body = PackedBody(
            packing: StatusUpdateNotification.redactingPassword(in: raw.body),
            format: .verbatim
        )
        let headers = Dictionary(
            raw.headers.map { (PostgresText.replacingNUL($0.key), PostgresText.replacingNUL($0.value)) },
            uniquingKeysWith: { first, _ in first }
        )
        self.headers = Self.jsonObject(headers)
        self.receivedAt = PostgresTimestamp.milliseconds(raw.receivedAt)
        self.key = raw.key.map(PostgresText.replacingNUL)
        self.source = raw.source
        self.traceContext = raw.traceContext
    }

    private static func jsonObject(_ strings: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a dictionary of strings cannot fail.
        return (try? encoder.encode(strings)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension NotificationRow {
    /// The row of a verified notification.
    /// - Throws: ``UnstorableNotification`` when a value cannot be stored (no notificationUUID, a date out of
    ///   PostgreSQL's range, a NUL character).
    init(ordinal: Int32, notification: DecodedNotification, raw: RawNotification) throws(UnstorableNotification) {
        let facts = NotificationFacts(notification)
        // Validated in place: a String made to check it would copy the whole body.
        guard (try? UTF8Span(validating: raw.body.span)) != nil else {
            throw UnstorableNotification(reason: "the body is not UTF-8 text")
        }
        self.ordinal = ordinal
        self.version = Int16(notification.version)
        self.receivedAt = PostgresTimestamp.milliseconds(raw.receivedAt)
        self.source = raw.source
        self.traceContext = raw.traceContext
        switch notification {
        case .v2(let v2):
            guard let text = facts.notificationUUID, let uuid = UUID(uuidString: text) else {
                throw UnstorableNotification(reason: "the notificationUUID is missing or not a UUID")
            }
            self.notificationUUID = uuid
            // From whichever member the shape has (data, summary, external purchase token, app data), as verified.
            let origin = v2.payload.origin
            self.environment = origin.environment?.rawValue
            self.bundleId = origin.bundleId
            self.appAppleId = origin.appAppleId
            self.status = v2.payload.data?.status.flatMap { Int16(exactly: $0.rawValue) }
            self.gracePeriodExpiresDate = try Self.checkedDate(
                v2.renewalInfo?.gracePeriodExpiresDate,
                "gracePeriodExpiresDate"
            )
            self.autoRenewProductId = v2.renewalInfo?.autoRenewProductId
            self.price = v2.transactionInfo?.price
            self.currency = v2.transactionInfo?.currency
            self.offerType = v2.transactionInfo?.offerType.flatMap { Int16(exactly: $0.rawValue) }
            let transaction = v2.transactionInfo
            let renewal = v2.renewalInfo
            self.carriesTransaction = transaction != nil
            self.carriesRenewalInfo = renewal != nil
            self.purchaseDate = try Self.checkedDate(transaction?.purchaseDate, "purchaseDate")
            self.productType = transaction?.type?.rawValue
            self.revocationReason = transaction?.revocationReason.flatMap { Int16(exactly: $0.rawValue) }
            self.inAppOwnershipType = transaction?.inAppOwnershipType?.rawValue
            self.subscriptionGroupIdentifier = transaction?.subscriptionGroupIdentifier
            self.appAccountToken = transaction?.appAccountToken ?? renewal?.appAccountToken
            self.previousOriginalTransactionId = transaction?.previousOriginalTransactionId
            self.renewalDate = try Self.checkedDate(renewal?.renewalDate, "renewalDate")
            self.isInBillingRetry = renewal?.isInBillingRetryPeriod
            self.expirationIntent = renewal?.expirationIntent.flatMap { Int16(exactly: $0.rawValue) }
            self.stateDate = try Self.checkedDate(v2.payload.signedDate, "signedDate")
            var known = DecodedNotificationJSON.KnownPayloads()
            self.body = PackedBody(packing: raw.body, decoded: &known)
            self.decoded = try Self.json(v2, body: raw.body, known: known)
        case .v1(let v1):
            // V1 has no id: the same body (Apple's retries repeat it byte for byte) always gets the same one.
            self.notificationUUID = UUID.derived(fromSHA256Of: raw.body)
            self.environment = facts.environment
            self.bundleId = v1.bid
            self.appAppleId = nil
            // The subscription's current receipt entry and pending renewal (SubscriptionStateRules; no status in V1).
            let entry = v1.currentReceiptEntry
            let renewal = v1.subscriptionPendingRenewal
            (status, price, currency, offerType, renewalDate, previousOriginalTransactionId) = (
                nil, nil, nil, nil, nil, nil
            )
            self.carriesTransaction = entry != nil
            self.carriesRenewalInfo = renewal != nil
            self.purchaseDate = try Self.checkedDate(entry?.purchaseDateMilliseconds, "purchase_date_ms")
            // V1 notifications are about auto-renewable subscriptions; an entry with an expiry is one.
            self.productType =
                entry?.expiresDateMilliseconds != nil ? ProductType.autoRenewableSubscription.rawValue : nil
            self.revocationReason = entry?.cancellationReason.flatMap { Int16($0) }
            self.inAppOwnershipType = entry?.inAppOwnershipType
            self.subscriptionGroupIdentifier = entry?.subscriptionGroupIdentifier
            self.appAccountToken = entry?.appAccountToken
            self.autoRenewProductId = renewal?.autoRenewProductId ?? v1.autoRenewProductId
            self.gracePeriodExpiresDate = try Self.checkedDate(
                renewal?.gracePeriodExpiresDateMs.flatMap { Int64($0) },
                "grace_period_expires_date_ms"
            )
            self.isInBillingRetry = renewal?.isInBillingRetryPeriod.map { $0 == "1" }
            self.expirationIntent = (renewal?.expirationIntent ?? v1.expirationIntent)?.intValue.flatMap {
                Int16(exactly: $0)
            }
            self.stateDate = try Self.checkedDate(v1.stateOrderMilliseconds, "the V1 ordering time")
            let stored = StatusUpdateNotification.redactingPassword(in: raw.body)
            self.decoded = try Self.json(DecodedNotificationJSON.v1(storedBody: stored))
            self.body = PackedBody(packing: stored)
        }
        guard let notificationType = facts.notificationType else {
            throw UnstorableNotification(reason: "the notification has no notificationType")
        }
        self.notificationType = notificationType
        self.subtype = facts.subtype
        self.originalTransactionId = facts.originalTransactionId
        self.signedDate = try Self.checkedDate(facts.signedDate, "signedDate")
        switch notification {
        case .v2:
            self.transactionId = facts.transactionId
            self.productId = facts.productId
            self.expiresDate = try Self.checkedDate(facts.expiresDate, "expiresDate")
            self.revocationDate = try Self.checkedDate(facts.revocationDate, "revocationDate")
            self.autoRenewStatus = facts.autoRenewStatus.flatMap { Int16(exactly: $0) }
        case .v1(let v1):
            // The subscription's current receipt entry: V1 carries no transaction of its own.
            let entry = v1.currentReceiptEntry
            self.transactionId = entry?.transactionId
            self.productId = entry?.productId
            self.expiresDate = try Self.checkedDate(entry?.expiresDateMilliseconds, "expires_date_ms")
            self.revocationDate = try Self.checkedDate(entry?.cancellationDateMilliseconds, "cancellation_date_ms")
            self.autoRenewStatus =
                v1.subscriptionPendingRenewal?.autoRenewStatus.flatMap { ["0": 0, "1": 1][$0] }
                ?? v1.autoRenewStatus.flatMap { ["false": 0, "true": 1][$0] }
        }
        let texts: [(String, String?)] = [
            ("notificationType", notificationType), ("subtype", subtype), ("environment", environment),
            ("bundleId", bundleId), ("originalTransactionId", originalTransactionId),
            ("transactionId", transactionId), ("productId", productId), ("autoRenewProductId", autoRenewProductId),
            ("currency", currency), ("type", productType), ("inAppOwnershipType", inAppOwnershipType),
            ("subscriptionGroupIdentifier", subscriptionGroupIdentifier), ("appAccountToken", appAccountToken),
            ("previousOriginalTransactionId", previousOriginalTransactionId),
        ]
        for case (let name, let value?) in texts where PostgresText.containsNUL(value) {
            throw UnstorableNotification(
                reason: "the \(name) contains a NUL character, which PostgreSQL text cannot hold"
            )
        }
    }

    /// The V2 JSON built from the signed bytes (``DecodedNotificationJSON``), with the payloads the packer decoded
    /// (`known`); it must carry decoded exactly the members the verifier decoded.
    private static func json(
        _ v2: DecodedNotificationV2,
        body: [UInt8],
        known: DecodedNotificationJSON.KnownPayloads
    ) throws(UnstorableNotification) -> String {
        let built: (json: [UInt8], decoded: Set<DecodedNotificationJSON.SignedMember>)
        do {
            built = try DecodedNotificationJSON.v2(body: body, known: known)
        } catch {
            throw UnstorableNotification(reason: "the decoded JSON cannot be built from the signed bytes: \(error)")
        }
        var verified: Set<DecodedNotificationJSON.SignedMember> = []
        if v2.transactionInfo != nil { verified.insert(.transactionInfo) }
        if v2.renewalInfo != nil { verified.insert(.renewalInfo) }
        if v2.appTransaction != nil { verified.insert(.appTransaction) }
        guard built.decoded == verified else {
            throw UnstorableNotification(
                reason: "the signed bytes carry \(built.decoded.map(\.rawValue).sorted()) where the verifier decoded "
                    + "\(verified.map(\.rawValue).sorted())"
            )
        }
        return try json(built.json)
    }

    /// JSON text for the `decoded` column. PostgreSQL `jsonb` rejects `\u0000` in strings: such a notification is set
    /// aside as UNSTORABLE, not lost.
    private static func json(_ bytes: [UInt8]) throws(UnstorableNotification) -> String {
        guard !PostgresText.containsEscapedNUL(json: bytes) else {
            throw UnstorableNotification(
                reason: "the decoded notification contains a NUL character (U+0000), which jsonb cannot hold"
            )
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw UnstorableNotification(reason: "the decoded notification is not UTF-8 text")
        }
        return text
    }

    private static func checkedDate(_ milliseconds: Int64?, _ name: String) throws(UnstorableNotification) -> Int64? {
        guard let milliseconds else { return nil }
        guard PostgresTimestamp.storableMilliseconds.contains(milliseconds) else {
            throw UnstorableNotification(reason: "the \(name) \(milliseconds) is outside years 1 to 9999")
        }
        return milliseconds
    }
}

extension UUID {
    /// A UUID from the first 16 bytes of a SHA-256, marked as version 8 (RFC 9562's custom UUIDs).
    static func derived(fromSHA256Of bytes: [UInt8]) -> UUID {
        var digest = Array(SHA256.hash(data: bytes).prefix(16))
        digest[6] = (digest[6] & 0x0F) | 0x80
        digest[8] = (digest[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
                digest[8], digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]
            )
        )
    }
}

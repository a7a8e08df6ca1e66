import AppStoreModels
import AppStoreSigning
import Foundation

/// What `asnp-bench loadgen` posts: realistic signed V2 notifications of many subscriptions (each walking through a
/// lifecycle), with Apple-style duplicate retries, some events out of order, and a small share of tampered bodies.
package struct LoadWorkload {
    /// The bodies in posting order.
    package var bodies: [String]
    /// Distinct notifications among them (what the workers store).
    package var notifications: Int
    package var duplicates: Int
    package var swapped: Int
    /// Tampered copies (what the workers reject).
    package var hostile: Int

    /// How a subscription's notifications follow one another in the load.
    package enum SubscriptionOrder: String, CaseIterable, Sendable {
        /// Each subscription's lifecycle in a row (``SubscriptionEvent/samples(count:bundleId:environment:start:)``):
        /// its six notifications reach one raw partition within milliseconds, so they fill produce batches together
        /// and share their certificates, which compression then finds.
        case lifecycle
        /// Consecutive notifications of different subscriptions, each subscription's in lifecycle order, its next one
        /// about a sixth of the load later: as in the field, where one subscription's notifications are days apart.
        case interleaved
    }

    /// How far after its original a retry comes, in bodies: about a second of `asnp-bench e2e`'s load.
    package static let retryWindow = 2_000

    /// Signs `count` notifications with `pki` (on every core) and arranges them; `v1Share` of them are legacy V1
    /// bodies carrying `sharedSecret` instead. The same `seed` arranges the same way.
    package static func make(
        count: Int,
        bundleId: String,
        pki: TestPKI,
        duplicateShare: Double,
        outOfOrderShare: Double,
        hostileShare: Double,
        v1Share: Double = 0,
        sharedSecret: String? = nil,
        order: SubscriptionOrder = .lifecycle,
        seed: UInt64
    ) throws -> LoadWorkload {
        let events = SubscriptionEvent.samples(count: count, bundleId: bundleId)
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let signed = SignedBodies(count: count)
        // Every n-th notification is V1, spread over the subscriptions.
        let v1Every = v1Share > 0 ? max(1, Int((1 / v1Share).rounded())) : 0
        DispatchQueue.concurrentPerform(iterations: count) { index in
            if v1Every > 0, index % v1Every == 0, let sharedSecret {
                signed.set(index, Result { try Self.v1Body(for: events[index], sharedSecret: sharedSecret) })
            } else {
                signed.set(index, Result { try signer.body(for: events[index]) })
            }
        }
        var bodies = try signed.values()
        var generator = SeededGenerator(seed: seed)

        // Neighbours swapped: a later event of a subscription may arrive before an earlier one. Swapped in the
        // lifecycle order, where neighbours are mostly one subscription's, so that interleaving keeps the swap.
        var keys = events.map(\.originalTransactionId)
        let swaps = Int((Double(count) * outOfOrderShare).rounded())
        for _ in 0..<swaps where count > 1 {
            let index = Int.random(in: 0..<(count - 1), using: &generator)
            bodies.swapAt(index, index + 1)
            keys.swapAt(index, index + 1)
        }
        if order == .interleaved {
            bodies = interleavedPositions(keys).map { bodies[$0] }
        }
        // Retries: anywhere in the load, a copy of a body among the ``retryWindow`` before it, so that every stretch
        // of the load holds about the same share of them. A copy placed anywhere after its original made the share
        // grow along the load, to three times the average in its last tenth: a bench's last steps posted more
        // duplicates than its first, and their figures per stored notification were not comparable.
        let duplicates = Int((Double(count) * duplicateShare).rounded())
        for _ in 0..<duplicates where !bodies.isEmpty {
            let position = Int.random(in: 1...bodies.count, using: &generator)
            let original = Int.random(in: max(0, position - Self.retryWindow)..<position, using: &generator)
            bodies.insert(bodies[original], at: position)
        }
        // Tampered copies of V2 bodies: their signatures no longer verify.
        let signedBodies = bodies.filter(Self.isV2)
        let hostile = signedBodies.isEmpty ? 0 : Int((Double(count) * hostileShare).rounded())
        for index in 0..<hostile {
            let tampered = NotificationSigner.tampered(signedBodies[index % signedBodies.count])
            bodies.insert(tampered, at: Int.random(in: 0...bodies.count, using: &generator))
        }
        return LoadWorkload(
            bodies: bodies,
            notifications: count,
            duplicates: duplicates,
            swapped: swaps,
            hostile: hostile
        )
    }
}

extension LoadWorkload {
    /// The positions of `keys` (each body's subscription) reordered so that consecutive ones belong to different
    /// subscriptions while any other is left, each subscription's in their order: the first of every subscription,
    /// then the second of every one, and so on.
    package static func interleavedPositions(_ keys: [String]) -> [Int] {
        var rows: [String: Int] = [:]
        var subscriptions: [[Int]] = []
        for (position, key) in keys.enumerated() {
            if let row = rows[key] {
                subscriptions[row].append(position)
            } else {
                rows[key] = subscriptions.count
                subscriptions.append([position])
            }
        }
        let longest = subscriptions.map(\.count).max() ?? 0
        return (0..<longest).flatMap { step in subscriptions.compactMap { step < $0.count ? $0[step] : nil } }
    }

    /// The `notificationUUID` of a V2 body, read from its signed payload without verifying it (the bench's own
    /// bodies, matched against what the workers stored); nil for anything else.
    package static func notificationUUID(of body: String) -> String? {
        payloadClaims(of: body)?["notificationUUID"] as? String
    }

    /// The claims of a V2 body's signed payload, read without verifying it; nil for anything else.
    package static func payloadClaims(of body: String) -> [String: Any]? {
        guard
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let jws = object["signedPayload"] as? String
        else { return nil }
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let payload = Array(segments[1].utf8).withUnsafeBufferPointer({ Base64URL.decode($0) })
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
    }

    /// Whether `body` is a V2 notification (else V1, posted to the V1 route).
    package static func isV2(_ body: String) -> Bool {
        body.hasPrefix(#"{"signedPayload""#)
    }

    /// `event` as Apple's legacy V1 notification (a statusUpdateNotification with its receipt info), one line.
    package static func v1Body(for event: SubscriptionEvent, sharedSecret: String) throws -> String {
        let type: String =
            switch event.notificationType {
            case .subscribed: "INITIAL_BUY"
            case .didRenew: event.subtype == .billingRecovery ? "DID_RECOVER" : "RENEWAL"
            case .didChangeRenewalStatus: "DID_CHANGE_RENEWAL_STATUS"
            case .didFailToRenew: "DID_FAIL_TO_RENEW"
            default: "CANCEL"
            }
        func date(_ milliseconds: Int64) -> String {
            Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
        }
        let receipt: [String: Any] = [
            "original_transaction_id": event.originalTransactionId,
            "transaction_id": event.transactionId,
            "product_id": event.productId,
            "quantity": "1",
            "purchase_date": date(event.purchaseDate),
            "purchase_date_ms": String(event.purchaseDate),
            "original_purchase_date_ms": String(event.purchaseDate),
            "expires_date": date(event.expiresDate),
            "expires_date_ms": String(event.expiresDate),
            "is_trial_period": "false",
        ]
        let body: [String: Any] = [
            "environment": event.environment.rawValue,
            "notification_type": type,
            "password": sharedSecret,
            "auto_renew_status": event.autoRenewStatus == .on ? "true" : "false",
            "auto_renew_product_id": event.productId,
            "unified_receipt": [
                "environment": event.environment.rawValue,
                "latest_receipt_info": [receipt],
                "status": 0,
                "pending_renewal_info": [
                    [
                        "auto_renew_product_id": event.productId,
                        "auto_renew_status": event.autoRenewStatus == .on ? "1" : "0",
                        "original_transaction_id": event.originalTransactionId,
                        "product_id": event.productId,
                    ]
                ],
            ] as [String: Any],
            "bid": event.bundleId,
            "bvrs": "42",
        ]
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Results written from `concurrentPerform`'s threads, one slot each.
private final class SignedBodies: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<String, any Error>?]

    package init(count: Int) { results = Array(repeating: nil, count: count) }

    package func set(_ index: Int, _ result: Result<String, any Error>) {
        lock.withLock { results[index] = result }
    }

    package func values() throws -> [String] {
        try lock.withLock { try results.map { try $0!.get() } }
    }
}

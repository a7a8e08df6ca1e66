import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SubscriptionEvent {
    /// The steps of a typical subscription's life, in order.
    package static let typicalLifecycle: [(NotificationType, NotificationSubtype?)] = [
        (.subscribed, .initialBuy), (.didRenew, nil), (.didChangeRenewalStatus, .autoRenewDisabled),
        (.didFailToRenew, .gracePeriod), (.didRenew, .billingRecovery), (.expired, .voluntary),
    ]

    /// `count` realistic events: consecutive subscriptions each walking through ``typicalLifecycle``, one minute
    /// apart from `start` (milliseconds since 1970; the default, 2026-01-01, lies inside ``TestPKI``'s validity),
    /// each with a fresh notification UUID and its own transaction id.
    package static func samples(
        count: Int,
        bundleId: String,
        environment: AppStoreEnvironment = .sandbox,
        start: Int64 = 1_767_225_600_000
    ) -> [SubscriptionEvent] {
        (0..<count).map { index in
            let (type, subtype) = typicalLifecycle[index % typicalLifecycle.count]
            return SubscriptionEvent(
                notificationType: type,
                subtype: subtype,
                notificationUUID: UUID().uuidString.lowercased(),
                signedDate: start + Int64(index) * 60_000,
                bundleId: bundleId,
                environment: environment,
                originalTransactionId: String(2_000_000_000 + index / typicalLifecycle.count),
                transactionId: String(700_000_000_000_000 + index),
                productId: bundleId + ".pro.monthly"
            )
        }
    }
}

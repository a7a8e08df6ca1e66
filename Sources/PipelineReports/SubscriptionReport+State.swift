import Foundation
import NotificationStore

extension SubscriptionReport {
    /// A state's lines: access now, the newest notification, the current purchase, the customer, the renewal.
    package static func stateLines(_ state: SubscriptionState, now: Date) -> [String] {
        func optional(_ value: String?) -> String { value ?? "-" }
        return [
            "subscription \(state.originalTransactionId) (\(optional(state.bundleId)), \(optional(state.environment)))",
            "entitled     " + entitlement(state, now: now),
            "state        \(state.lastNotificationType)" + (state.lastSubtype.map { " / \($0)" } ?? "")
                + " at \(time(state.lastSignedDate))",
            "product      \(optional(state.productId)) (\(optional(state.productType))), transaction "
                + optional(state.transactionId) + (state.purchaseDate.map { ", bought \(time($0))" } ?? ""),
            "customer     account token \(optional(state.appAccountToken)), "
                + "\(optional(state.inAppOwnershipType)), group \(optional(state.subscriptionGroupIdentifier))"
                + (state.previousOriginalTransactionId.map { ", replaced subscription \($0)" } ?? ""),
            "expires      \(state.expiresDate.map(time) ?? "-")"
                + (state.renewalDate.map { ", renewal date \(time($0))" } ?? "") + ", auto-renew "
                + (state.autoRenewStatus.map { $0 == 1 ? "on" : "off" } ?? "-")
                + (state.autoRenewProductId.map { " to \($0)" } ?? "")
                + (state.revocationDate.map { ", revoked \(time($0))" } ?? "")
                + (state.isInBillingRetry == true ? ", in billing retry" : "")
                + (state.gracePeriodExpiresDate.map { ", grace period until \(time($0))" } ?? ""),
            "price        " + price(state),
        ]
    }

    /// Apple's status names, by `status`.
    package static let statusNames = [
        1: "active", 2: "expired", 3: "billing retry", 4: "billing grace period", 5: "revoked",
    ]

    /// Whether the customer has access now by Docs/entitlement.md's rule (`entitled` and `entitled_until` against
    /// `now`), with what it rests on: Apple's status for a subscription, the product type for a one-time purchase.
    package static func entitlement(_ state: SubscriptionState, now: Date = Date()) -> String {
        let basis: String
        if let status = state.status {
            basis = "status \(status) \(statusNames[status] ?? "unknown")"
        } else {
            basis = state.productType ?? "no status"
        }
        switch (state.entitled, state.entitledUntil) {
        case (true?, let until?) where until > now: return "yes until \(time(until)) (\(basis))"
        case (true?, let until?): return "no: access ended \(time(until)) (\(basis))"
        case (true?, nil): return "yes, with no end (\(basis))"
        case (false?, _): return "no (\(basis))"
        case (nil, _): return "- (Apple's fields do not say: \(basis))"
        }
    }

    /// The price in the currency's units (Apple sends milliunits), and the offer type when there is one.
    package static func price(_ state: SubscriptionState) -> String {
        guard let price = state.price else { return "-" }
        let units = "\(price / 1000).\(String(format: "%03d", abs(price % 1000)))"
        return "\(units) \(state.currency ?? "")" + (state.offerType.map { ", offer type \($0)" } ?? "")
    }

    /// RFC 3339 in UTC with milliseconds.
    package static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

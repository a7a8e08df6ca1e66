import Foundation
import NotificationStore

/// Every subscription of one customer (the appAccountToken their app gave): `asnp subscription show --account-token`.
package struct CustomerReport: Encodable {
    package var appAccountToken: String
    package var subscriptions: [SubscriptionState]

    package init(appAccountToken: String, subscriptions: [SubscriptionState]) {
        self.appAccountToken = appAccountToken
        self.subscriptions = subscriptions
    }

    /// The customer's subscriptions; nil when none is stored.
    package static func read(from store: NotificationStore, appAccountToken: String) async throws -> CustomerReport? {
        let states = try await store.subscriptions(appAccountToken: appAccountToken)
        return states.isEmpty ? nil : CustomerReport(appAccountToken: appAccountToken, subscriptions: states)
    }

    /// Access now in any of the subscriptions, then each one's state.
    package func text(now: Date = Date()) -> String {
        let access = subscriptions.contains { SubscriptionReport.entitlement($0, now: now).hasPrefix("yes") }
        var lines = [
            "customer \(appAccountToken): \(access ? "has access" : "no access") now, "
                + "\(subscriptions.count) subscription(s)"
        ]
        for state in subscriptions { lines += [""] + SubscriptionReport.stateLines(state, now: now) }
        return lines.joined(separator: "\n")
    }
}

import AppStoreTestSupport
import Foundation
import NotificationStore
import PipelineReports
import Testing

@Suite("Subscription reports: access now, the state's lines, the timeline", .tags(.fast))
struct SubscriptionReportTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func state(entitled: Bool?, until: Date?, token: String = "token-1") -> SubscriptionState {
        SubscriptionState(
            originalTransactionId: "1000",
            lastNotificationUUID: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
            lastNotificationType: "DID_RENEW",
            lastSignedDate: now.addingTimeInterval(-60),
            productId: "monthly",
            environment: "Sandbox",
            bundleId: "com.example.notes",
            status: 1,
            price: 4_990,
            currency: "USD",
            entitled: entitled,
            entitledUntil: until,
            updatedAt: now,
            appAccountToken: token
        )
    }

    @Test("entitlement: access until a later end, ended at an earlier one, no end, none, unknown")
    func entitlement() {
        let later = Self.now.addingTimeInterval(3_600)
        let earlier = Self.now.addingTimeInterval(-3_600)
        func text(_ entitled: Bool?, _ until: Date?) -> String {
            SubscriptionReport.entitlement(Self.state(entitled: entitled, until: until), now: Self.now)
        }
        #expect(text(true, later) == "yes until \(SubscriptionReport.time(later)) (status 1 active)")
        #expect(text(true, earlier) == "no: access ended \(SubscriptionReport.time(earlier)) (status 1 active)")
        #expect(text(true, nil) == "yes, with no end (status 1 active)")
        #expect(text(false, nil) == "no (status 1 active)")
        #expect(text(nil, nil) == "- (Apple's fields do not say: status 1 active)")
    }

    @Test("price in the currency's units from Apple's milliunits; the state's lines; the customer's access")
    func lines() {
        let state = Self.state(entitled: true, until: Self.now.addingTimeInterval(3_600))
        #expect(SubscriptionReport.price(state) == "4.990 USD")
        let text = SubscriptionReport(state: state, notifications: []).text(now: Self.now)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "subscription 1000 (com.example.notes, Sandbox)")
        #expect(lines[1].hasPrefix("entitled     yes until "))
        #expect(lines.contains("notifications (0), oldest first:"))

        let ended = Self.state(entitled: true, until: Self.now.addingTimeInterval(-1), token: "token-1")
        let customer = CustomerReport(appAccountToken: "token-1", subscriptions: [ended, state])
        #expect(customer.text(now: Self.now).hasPrefix("customer token-1: has access now, 2 subscription(s)\n"))
        let none = CustomerReport(appAccountToken: "token-1", subscriptions: [ended])
        #expect(none.text(now: Self.now).hasPrefix("customer token-1: no access now, 1 subscription(s)\n"))
    }
}

/// What Get Notification History narrows a window to: a type (and subtype), or one customer's transactions, and
/// optionally only what Apple could not deliver. Each filter has a ledger of its own.
package struct NotificationHistoryFilter: Sendable, Hashable, CustomStringConvertible {
    package var notificationType: String?
    package var notificationSubtype: String?
    /// One customer's notifications (any of their transaction ids); Apple refuses it together with a type.
    package var transactionID: String?
    /// Only notifications Apple could not deliver.
    package var onlyFailures: Bool

    /// No filter: every notification (the periodic reconciler's default).
    package static let none = NotificationHistoryFilter()

    package init(
        notificationType: String? = nil,
        notificationSubtype: String? = nil,
        transactionID: String? = nil,
        onlyFailures: Bool = false
    ) {
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionID = transactionID
        self.onlyFailures = onlyFailures
    }

    /// The filter in a stable text form (the ledger's `filter`), empty when none.
    package var description: String {
        var parts: [String] = []
        if let notificationType { parts.append("type=\(notificationType)") }
        if let notificationSubtype { parts.append("subtype=\(notificationSubtype)") }
        if let transactionID { parts.append("transaction=\(transactionID)") }
        if onlyFailures { parts.append("onlyFailures") }
        return parts.joined(separator: " ")
    }
}

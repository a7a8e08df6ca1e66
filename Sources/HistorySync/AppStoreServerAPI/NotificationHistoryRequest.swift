import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The body of Get Notification History: a window of at most 180 days (30 in the sandbox), optionally narrowed.
package struct NotificationHistoryRequest: Sendable, Hashable, Encodable {
    /// Milliseconds since 1970, inclusive.
    package var startDate: Int64
    /// Milliseconds since 1970, exclusive.
    package var endDate: Int64
    package var notificationType: String?
    package var notificationSubtype: String?
    /// Narrows to one customer's notifications (any of their transaction ids); Apple refuses it together with a
    /// type filter.
    package var transactionId: String?
    /// Only notifications Apple could not deliver.
    package var onlyFailures: Bool?

    package init(
        start: Date,
        end: Date,
        notificationType: String? = nil,
        notificationSubtype: String? = nil,
        transactionID: String? = nil,
        onlyFailures: Bool = false
    ) {
        startDate = Int64((start.timeIntervalSince1970 * 1000).rounded(.down))
        endDate = Int64((end.timeIntervalSince1970 * 1000).rounded(.down))
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        transactionId = transactionID
        self.onlyFailures = onlyFailures ? true : nil
    }

    /// How far back Apple accepts a `startDate` in `environment` (180 days in production, 30 in the sandbox; older
    /// is answered 400 StartDateTooFarInPastError, 4000012); nil where Apple keeps no history.
    package static func historyRetention(in environment: AppStoreEnvironment) -> Duration? {
        switch environment {
        case .production: .seconds(180 * 86_400)
        case .sandbox: .seconds(30 * 86_400)
        default: nil
        }
    }

    /// The request for `range`, narrowed by `filter`.
    package init(_ range: Range<Date>, filter: NotificationHistoryFilter) {
        self.init(
            start: range.lowerBound,
            end: range.upperBound,
            notificationType: filter.notificationType,
            notificationSubtype: filter.notificationSubtype,
            transactionID: filter.transactionID,
            onlyFailures: filter.onlyFailures
        )
    }
}

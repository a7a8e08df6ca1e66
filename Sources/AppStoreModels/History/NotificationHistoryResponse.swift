/// A page of Apple's Get Notification History response (`POST /inApps/v1/notifications/history`).
package struct NotificationHistoryResponse: Sendable, Hashable, Codable {
    /// The notifications of this page, oldest first.
    package var notificationHistory: [NotificationHistoryResponseItem]?
    /// Whether another page follows.
    package var hasMore: Bool?
    /// The token to send for the next page.
    package var paginationToken: String?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        notificationHistory: [NotificationHistoryResponseItem]? = nil,
        hasMore: Bool? = nil,
        paginationToken: String? = nil
    ) {
        self.notificationHistory = notificationHistory
        self.hasMore = hasMore
        self.paginationToken = paginationToken
    }
}

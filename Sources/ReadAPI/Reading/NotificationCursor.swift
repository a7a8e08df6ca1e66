import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A position in a subscription's notifications, newest first by (signed date, else received date; notification
/// UUID), and which way to read from it. Opaque to clients: base64url of `v1 <n|p> <microseconds> <uuid>`.
///
/// A position rather than an offset, so a page is the same rows however many notifications arrive meanwhile: a
/// newer one shows on the first page, and one Apple delivers late lands where its date puts it.
package struct NotificationCursor: Sendable, Hashable {
    /// Which way a cursor reads.
    package enum Direction: String, Sendable, Hashable {
        /// Older than the position: the next page.
        case older = "n"
        /// Newer than the position: the previous page.
        case newer = "p"
    }

    package var direction: Direction
    /// The position's date, in microseconds since 1970 (PostgreSQL's precision).
    package var microseconds: Int64
    package var notificationUUID: UUID

    package init(direction: Direction, microseconds: Int64, notificationUUID: UUID) {
        self.direction = direction
        self.microseconds = microseconds
        self.notificationUUID = notificationUUID
    }

    /// The text a client passes back as `cursor`.
    package var text: String {
        Base64URL.encode(
            Array("v1 \(direction.rawValue) \(microseconds) \(notificationUUID.uuidString.lowercased())".utf8)
        )
    }

    /// The cursor `text` encodes; nil for text no cursor wrote.
    package init?(text: String) {
        guard text.utf8.count <= 128 else { return nil }
        guard let decoded = Base64URL.decode(text) else { return nil }
        let parts = String(decoding: decoded, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let direction = Direction(rawValue: String(parts[1])),
            let microseconds = Int64(parts[2]), let uuid = UUID(uuidString: String(parts[3]))
        else { return nil }
        self.init(direction: direction, microseconds: microseconds, notificationUUID: uuid)
    }
}

/// A verified notification of either version, as the pipeline stores and publishes it.
public enum DecodedNotification: Sendable, Hashable {
    /// An App Store Server Notification V2 (signed JWS).
    case v2(DecodedNotificationV2)
    /// A legacy App Store Server Notification V1 (JSON with a shared secret).
    case v1(StatusUpdateNotification)

    /// The notification format version: 1 or 2.
    public var version: Int {
        switch self {
        case .v1: 1
        case .v2: 2
        }
    }
}

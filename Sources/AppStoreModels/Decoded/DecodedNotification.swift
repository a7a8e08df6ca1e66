/// A verified notification of either version, as the pipeline stores and publishes it.
///
/// Indirect: a decoded notification holds dozens of strings, and it is handed on (verdicts, batches, results)
/// more often than it is made; boxed, each copy retains one reference instead of every string.
public indirect enum DecodedNotification: Sendable, Hashable {
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

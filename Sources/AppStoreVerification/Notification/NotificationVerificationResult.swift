import AppStoreModels

/// The verdict on one HTTP body: verified and decoded, or rejected with a status and reason.
///
/// Every body gets one, never a crash, so that what was accepted can always be stored one way or the other.
public enum NotificationVerificationResult: Sendable, Hashable {
    /// The body verified; the notification with every signed member decoded.
    case verified(DecodedNotification)
    /// The body did not verify; the error names Apple's status and the reason.
    case rejected(VerificationError)

    /// Whether the body verified.
    public var isVerified: Bool {
        if case .verified = self { return true }
        return false
    }

    /// `OK`, or the rejection's code in Apple's vocabulary.
    public var status: String {
        switch self {
        case .verified: "OK"
        case .rejected(let error): error.code.rawValue
        }
    }
}

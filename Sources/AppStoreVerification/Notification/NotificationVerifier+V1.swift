import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationVerifier {
    /// Checks a V1 `statusUpdateNotification`: its shape, its shared secret, its app and its environment.
    ///
    /// V1 bodies are not signed; the shared secret in `password` is all that authenticates them, so it is
    /// compared in constant time against every configured secret.
    func verifyV1(body: Data) throws(VerificationError) -> StatusUpdateNotification {
        var notification: StatusUpdateNotification
        do {
            notification = try JSONDecoder().decode(StatusUpdateNotification.self, from: body)
        } catch {
            throw .malformedBody(
                "the body is not a V1 notification of the documented shape",
                context: String(describing: error)
            )
        }
        guard let notificationType = notification.notificationType, !notificationType.isEmpty else {
            throw .malformedBody("the V1 notification has no notification_type")
        }
        guard let password = notification.password else {
            throw VerificationError(code: .invalidPassword, reason: "the V1 notification has no password")
        }
        guard !configuration.sharedSecrets.isEmpty else {
            throw VerificationError(code: .invalidPassword, reason: "no V1 shared secret is configured for this app")
        }
        // Compare with every secret, without stopping early, so timing tells nothing about which one matched.
        var matched = false
        for secret in configuration.sharedSecrets {
            matched = constantTimeEquals(password, secret) || matched
        }
        guard matched else {
            throw VerificationError(
                code: .invalidPassword,
                reason: "the V1 password matches no configured shared secret"
            )
        }
        if let bundleId = notification.bid, bundleId != configuration.policy.bundleId {
            throw VerificationError(
                code: .invalidAppIdentifier,
                reason:
                    "the V1 notification is for bundle id \(VerificationError.quoted(bundleId)), expected '\(configuration.policy.bundleId)'"
            )
        }
        guard notification.resolvedEnvironment == configuration.policy.environment else {
            throw VerificationError(
                code: .invalidEnvironment,
                reason:
                    "the V1 notification is from environment \(VerificationError.quoted(notification.environment)), expected '\(configuration.policy.environment)'"
            )
        }
        // The secret has done its job; nothing downstream (store, topics, logs) should ever carry it.
        notification.password = nil
        return notification
    }
}

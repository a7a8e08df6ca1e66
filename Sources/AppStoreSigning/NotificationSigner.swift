import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Produces signed V2 notification bodies, byte for byte what Apple would post, from decoded values.
package struct NotificationSigner: Sendable {
    /// Signs the outer payload and every inner value.
    package let signer: JWSSigner

    /// Creates a notification signer around a JWS signer.
    package init(signer: JWSSigner) {
        self.signer = signer
    }

    /// Signs `payload` and wraps it as the HTTP body `{"signedPayload":"..."}`.
    package func body(for payload: ResponseBodyV2DecodedPayload) throws -> String {
        try Self.envelope(try signer.sign(payload))
    }

    /// The HTTP body Apple posts around a signed payload: `{"signedPayload":"..."}`.
    package static func envelope(_ signedPayload: String) throws -> String {
        String(decoding: try JSONEncoder().encode(ResponseBodyV2(signedPayload: signedPayload)), as: UTF8.self)
    }

    /// A subscription notification for `event`: outer payload, signed transaction and signed renewal info.
    package func body(for event: SubscriptionEvent) throws -> String {
        try body(for: payload(for: event))
    }

    /// The outer payload for `event`, with its transaction and renewal info signed inside `data`.
    package func payload(for event: SubscriptionEvent) throws -> ResponseBodyV2DecodedPayload {
        ResponseBodyV2DecodedPayload(
            notificationType: event.notificationType,
            subtype: event.subtype,
            notificationUUID: event.notificationUUID,
            version: "2.0",
            signedDate: event.signedDate,
            data: NotificationData(
                appAppleId: event.appAppleId,
                bundleId: event.bundleId,
                bundleVersion: "42",
                environment: event.environment,
                signedRenewalInfo: event.isAutoRenewable ? try signer.sign(event.renewalInfo) : nil,
                signedTransactionInfo: try signer.sign(event.transaction),
                status: event.isAutoRenewable
                    ? (event.status ?? (event.revocationDate == nil ? .active : .revoked)) : nil
            )
        )
    }
}

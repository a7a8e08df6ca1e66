import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Verifies raw notification HTTP bodies, V2 and V1, for one app in one environment.
///
/// This is the entry point the worker and `asnp verify` use: any bytes in, a ``NotificationVerificationResult``
/// out. V2 bodies are checked by ``SignedDataVerifier``; V1 bodies by their shared secret and environment.
public struct NotificationVerifier: Sendable {
    /// Settings of a notification verifier.
    public struct Configuration: Sendable {
        /// The app and environment notifications must belong to.
        public var policy: VerificationPolicy
        /// The V1 shared secrets accepted (several during a rotation). V1 bodies are rejected when empty.
        public var sharedSecrets: [String]
        /// Bodies larger than this are rejected as malformed without parsing. Default: 1 MiB, far above Apple's.
        public var maximumBodySize: Int

        /// Creates settings; V1 bodies need at least one shared secret.
        public init(policy: VerificationPolicy, sharedSecrets: [String] = [], maximumBodySize: Int = 1 << 20) {
            self.policy = policy
            self.sharedSecrets = sharedSecrets
            self.maximumBodySize = maximumBodySize
        }
    }

    /// The settings this verifier was made with.
    package let configuration: Configuration
    /// The V2 verifier, sharing its chain cache with whoever shares the ``ChainVerifier``.
    public let signedDataVerifier: SignedDataVerifier

    /// Creates a verifier; share `chainVerifier` among apps that trust the same roots.
    public init(configuration: Configuration, chainVerifier: ChainVerifier) {
        self.configuration = configuration
        self.signedDataVerifier = SignedDataVerifier(policy: configuration.policy, chainVerifier: chainVerifier)
    }

    /// Verifies one HTTP body.
    /// - Parameters:
    ///   - body: The exact bytes Apple posted.
    ///   - version: The format the body must be in (the ingress route says which); nil to recognise it.
    public func verify(body: some Collection<UInt8>, version: NotificationVersion? = nil) async
        -> NotificationVerificationResult
    {
        do throws(VerificationError) {
            return .verified(try await verifyOrThrow(body: Data(body), version: version))
        } catch {
            return .rejected(error)
        }
    }

    private func verifyOrThrow(body: Data, version: NotificationVersion?) async throws(VerificationError)
        -> DecodedNotification
    {
        guard !body.isEmpty else {
            throw .malformedBody("the body is empty")
        }
        guard body.count <= configuration.maximumBodySize else {
            throw .malformedBody(
                "the body has \(body.count) bytes, more than the limit of \(configuration.maximumBodySize)"
            )
        }
        let probe: NotificationBodyProbe
        do {
            probe = try JSONDecoder().decode(NotificationBodyProbe.self, from: body)
        } catch {
            throw .malformedBody("the body is not a JSON object", context: String(describing: error))
        }
        switch version ?? (probe.looksLikeV1 && probe.signedPayload.isAbsent ? .v1 : .v2) {
        case .v1:
            return .v1(try verifyV1(body: body))
        case .v2:
            switch probe.signedPayload {
            case .absent:
                throw .malformedBody("the body has no signedPayload")
            case .other:
                throw .verificationFailure("the signedPayload is not a string")
            case .string(let signedPayload):
                return .v2(try await signedDataVerifier.verifyAndDecodeNotification(signedPayload: signedPayload))
            }
        case let unsupported:
            throw .malformedBody("notification version \(unsupported.rawValue) is not supported")
        }
    }
}

extension NotificationBodyProbe.SignedPayloadField {
    var isAbsent: Bool {
        if case .absent = self { return true }
        return false
    }
}

import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Verifies and decodes the App Store's signed values (notifications, transactions, renewal info, app
/// transactions) for one app in one environment, with the same checks and verdicts as Apple's
/// `SignedDataVerifier` in offline mode.
///
/// Cheap to create: per-app verifiers share one ``ChainVerifier`` and so its cache of verified chains.
public struct SignedDataVerifier: Sendable {
    /// The app and environment every value must belong to.
    package let policy: VerificationPolicy
    /// Verifies certificate chains; shared.
    package let chainVerifier: ChainVerifier

    /// Creates a verifier for `policy` that checks chains with the shared `chainVerifier`.
    public init(policy: VerificationPolicy, chainVerifier: ChainVerifier) {
        self.policy = policy
        self.chainVerifier = chainVerifier
    }

    /// Verifies a notification's `signedPayload` and every signed value inside it, and decodes them all.
    ///
    /// The outer payload is checked like Apple's `verifyAndDecodeNotification`; the transaction, renewal info and
    /// app transaction inside it like Apple's functions for each, so a forged or foreign inner value is rejected
    /// even under a valid outer signature.
    public func verifyAndDecodeNotification(
        signedPayload: String
    ) async throws(VerificationError) -> DecodedNotificationV2 {
        let payload = try await verifyAndDecodeNotificationPayload(signedPayload: signedPayload)
        var decoded = DecodedNotificationV2(payload: payload)
        if let data = payload.data {
            if let signedTransactionInfo = data.signedTransactionInfo {
                decoded.transactionInfo = try await verifyAndDecodeTransaction(signedTransactionInfo)
            }
            if let signedRenewalInfo = data.signedRenewalInfo {
                decoded.renewalInfo = try await verifyAndDecodeRenewalInfo(signedRenewalInfo)
            }
        }
        if let signedAppTransactionInfo = payload.appData?.signedAppTransactionInfo {
            decoded.appTransaction = try await verifyAndDecodeAppTransaction(signedAppTransactionInfo)
        }
        return decoded
    }

    /// Verifies and decodes the outer notification payload only (its inner signed values stay encoded).
    package func verifyAndDecodeNotificationPayload(
        signedPayload: String
    ) async throws(VerificationError) -> ResponseBodyV2DecodedPayload {
        let payload = try await verifiedPayload(
            signedPayload,
            as: ResponseBodyV2DecodedPayload.self,
            what: "notification"
        )
        let origin = payload.origin
        try checkApp(
            bundleId: origin.bundleId,
            appAppleId: origin.appAppleId,
            checksAppAppleId: true,
            what: "notification"
        )
        try checkEnvironment(origin.environment, what: "notification")
        return payload
    }

    /// Verifies and decodes a signed transaction; its bundle id and environment must match the policy.
    public func verifyAndDecodeTransaction(
        _ signedTransaction: String
    ) async throws(VerificationError) -> JWSTransactionDecodedPayload {
        let transaction = try await verifiedPayload(
            signedTransaction,
            as: JWSTransactionDecodedPayload.self,
            what: "transaction"
        )
        try checkApp(bundleId: transaction.bundleId, appAppleId: nil, checksAppAppleId: false, what: "transaction")
        try checkEnvironment(transaction.environment, what: "transaction")
        return transaction
    }

    /// Verifies and decodes signed renewal info; its environment must match the policy (it carries no bundle id).
    public func verifyAndDecodeRenewalInfo(
        _ signedRenewalInfo: String
    ) async throws(VerificationError) -> JWSRenewalInfoDecodedPayload {
        let renewalInfo = try await verifiedPayload(
            signedRenewalInfo,
            as: JWSRenewalInfoDecodedPayload.self,
            what: "renewal info"
        )
        try checkEnvironment(renewalInfo.environment, what: "renewal info")
        return renewalInfo
    }

    /// Verifies and decodes a signed app transaction; bundle id, app Apple id (production) and receipt type must
    /// match the policy.
    public func verifyAndDecodeAppTransaction(
        _ signedAppTransaction: String
    ) async throws(VerificationError) -> AppTransaction {
        let appTransaction = try await verifiedPayload(
            signedAppTransaction,
            as: AppTransaction.self,
            what: "app transaction"
        )
        try checkApp(
            bundleId: appTransaction.bundleId,
            appAppleId: appTransaction.appAppleId,
            checksAppAppleId: true,
            what: "app transaction"
        )
        try checkEnvironment(appTransaction.receiptType, what: "app transaction")
        return appTransaction
    }
}

extension SignedDataVerifier {
    /// Parses `compact`, verifies its chain and signature (unless the environment is unsigned) and decodes it.
    ///
    /// The order of checks, and so which status a bad value gets, follows Apple's `_decode_signed_object`.
    func verifiedPayload<Payload: SignedPayload>(
        _ compact: String,
        as type: Payload.Type,
        what: String
    ) async throws(VerificationError) -> Payload {
        let jws = try CompactJWS(compact, memo: chainVerifier.headerMemo)
        let payloadData = Data(jws.payload)
        // Apple's library needs only a JSON object with a usable signed date before it checks the chain and
        // signature, and applies the documented shape last. Decode the shape once, but report a shape error only
        // after the signature checks, so a bad value gets the same status as there.
        let decoded = Result { try JSONDecoder().decode(Payload.self, from: payloadData) }
        let signedDate: Int64?
        switch decoded {
        case .success(let payload):
            signedDate = payload.effectiveSignedDate
        case .failure:
            do {
                signedDate = try JSONDecoder().decode(SignedDateProbe.self, from: payloadData).effectiveSignedDate
            } catch {
                throw .verificationFailure(
                    "the \(what) payload is not a JSON object with a numeric signed date",
                    context: String(describing: error)
                )
            }
        }

        if policy.checksSignatures {
            guard let x5c = jws.header.x5c, !x5c.isEmpty else {
                throw .verificationFailure("the \(what) JWS header has no x5c certificate chain")
            }
            guard jws.header.alg == "ES256" else {
                throw .verificationFailure("the \(what) JWS algorithm is not ES256")
            }
            // Apple's library judges validity at the signed date in whole seconds, rounded down.
            let signedAt = signedDate.map { Date(timeIntervalSince1970: (Double($0) / 1000).rounded(.down)) } ?? Date()
            let signingKey = try await chainVerifier.signingKey(x5c: x5c, at: signedAt)
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
                signingKey.isValidSignature(signature, for: jws.signingInputDigest)
            else {
                throw .verificationFailure("the \(what) signature does not verify with the leaf certificate's key")
            }
        }

        switch decoded {
        case .success(let payload):
            return payload
        case .failure(let error):
            throw .verificationFailure(
                "the \(what) payload does not have the documented shape",
                context: String(describing: error)
            )
        }
    }

    private func checkApp(
        bundleId: String?,
        appAppleId: Int64?,
        checksAppAppleId: Bool,
        what: String
    ) throws(VerificationError) {
        guard bundleId == policy.bundleId else {
            throw VerificationError(
                code: .invalidAppIdentifier,
                reason:
                    "the \(what) is for bundle id \(VerificationError.quoted(bundleId)), expected '\(policy.bundleId)'"
            )
        }
        if checksAppAppleId, policy.environment == .production, appAppleId != policy.appAppleId {
            throw VerificationError(
                code: .invalidAppIdentifier,
                reason:
                    "the \(what) is for app Apple id \(appAppleId.map(String.init) ?? "(none)"), expected \(policy.appAppleId.map(String.init) ?? "(none)")"
            )
        }
    }

    private func checkEnvironment(_ environment: AppStoreEnvironment?, what: String) throws(VerificationError) {
        guard environment == policy.environment else {
            throw VerificationError(
                code: .invalidEnvironment,
                reason:
                    "the \(what) is from environment \(VerificationError.quoted(environment?.rawValue)), expected '\(policy.environment)'"
            )
        }
    }
}

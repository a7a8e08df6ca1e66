import AppStoreModels
import Crypto
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Verifies `x5c` certificate chains against a fixed set of trusted roots and hands out the leaf's signing key.
///
/// One instance is meant to be shared by every app and environment that trusts the same roots, so its
/// verified-chain cache serves them all. Thread-safe.
public final class ChainVerifier: Sendable {
    /// Settings of a chain verifier.
    public struct Configuration: Sendable {
        /// The roots a chain must end in. Default: Apple Root CA - G3.
        public var trustedRoots: [Certificate]
        /// How many distinct verified chains to remember. Apple rotates its signing leaf rarely, so a few suffice;
        /// the bound keeps a flood of forged chains from growing memory. 0 turns the cache off, and the memo of
        /// decoded JWS headers with it (to measure what they save). Default: 64.
        public var cacheCapacity: Int

        /// Creates settings; the defaults trust Apple Root CA - G3 and cache 64 chains.
        public init(trustedRoots: [Certificate] = [AppleRootCertificates.appleRootCAG3], cacheCapacity: Int = 64) {
            self.trustedRoots = trustedRoots
            self.cacheCapacity = cacheCapacity
        }
    }

    /// The settings this verifier was made with.
    package let configuration: Configuration
    private let rootStore: CertificateStore
    private let cache: VerifiedChainCache?
    /// Decoded JWS headers, shared like the chains they carry; nil when caching is off.
    let headerMemo: JWSHeaderSegmentMemo<JWSHeader>?

    /// Creates a chain verifier with an empty cache.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        self.rootStore = CertificateStore(configuration.trustedRoots)
        self.cache = configuration.cacheCapacity > 0 ? VerifiedChainCache(capacity: configuration.cacheCapacity) : nil
        self.headerMemo = configuration.cacheCapacity > 0 ? JWSHeaderSegmentMemo() : nil
    }

    /// Lookup counters of the verified-chain cache.
    package var cacheStatistics: ChainCacheStatistics { cache?.statistics ?? ChainCacheStatistics() }

    /// Verifies `x5c` (leaf, intermediate, root as standard base64 DER) at `date` and returns the leaf's key.
    ///
    /// Mirrors Apple's libraries: the chain must be exactly three certificates long, the leaf and intermediate are
    /// checked against the configured roots (the `x5c` root itself is not trusted), and certificate validity is
    /// judged at `date`, the signed date of the JWS.
    /// - Throws: `INVALID_CERTIFICATE` (no roots, undecodable certificate), `INVALID_CHAIN_LENGTH`, or
    ///   `VERIFICATION_FAILURE` (untrusted, expired, or not an App Store chain).
    package func signingKey(x5c: [String], at date: Date) async throws(VerificationError) -> P256.Signing.PublicKey {
        guard !configuration.trustedRoots.isEmpty else {
            throw VerificationError(code: .invalidCertificate, reason: "no trusted root certificates are configured")
        }
        guard x5c.count == 3 else {
            throw VerificationError(
                code: .invalidChainLength,
                reason: "the x5c header holds \(x5c.count) certificates, App Store chains have 3"
            )
        }
        let key = VerifiedChainCache.Key(leaf: x5c[0], intermediate: x5c[1])
        if let signingKey = cache?.signingKey(for: key, at: date) {
            return signingKey
        }
        let leaf = try Self.certificate(x5c[0], role: "leaf")
        let intermediate = try Self.certificate(x5c[1], role: "intermediate")
        // X.509 times cover the years 1 to 9999; a date outside them cannot be judged (and would trap inside the
        // certificate library), so it is a failure like any other invalid date.
        guard Self.representableDates.contains(date) else {
            throw .verificationFailure("the signed date is outside the years 1 to 9999")
        }

        var verifier = Verifier(rootCertificates: rootStore) {
            RFC5280Policy(fixedExpiryValidationTime: date)
            AppleChainPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        let chain: ValidatedCertificateChain
        switch result {
        case .validCertificate(let validated):
            chain = validated
        case .couldNotValidate(let failures):
            throw .verificationFailure(
                "the certificate chain does not verify to a trusted root at the signed date",
                context: failures.map { String(describing: $0.policyFailureReason) }.joined(separator: "; ")
            )
        }
        // The policy pins the length to 3; also insist the chain runs through the intermediate that was sent.
        guard chain.count == 3, chain[1] == intermediate else {
            throw .verificationFailure("the certificate chain does not run through the sent intermediate")
        }
        guard let signingKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw .verificationFailure("the leaf certificate's key is not a P-256 key, as ES256 requires")
        }
        let notBefore = chain.map(\.notValidBefore).max()!
        let notAfter = chain.map(\.notValidAfter).min()!
        if notBefore <= notAfter {
            cache?.insert(.init(signingKey: signingKey, validity: notBefore...notAfter), for: key)
        }
        return signingKey
    }

    /// 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59Z.
    private static let representableDates =
        Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799)

    private static func certificate(_ base64: String, role: String) throws(VerificationError) -> Certificate {
        guard let der = Base64Standard.decode(base64) else {
            throw VerificationError(code: .invalidCertificate, reason: "the \(role) certificate is not valid base64")
        }
        do {
            return try Certificate(derEncoded: der)
        } catch {
            throw VerificationError(
                code: .invalidCertificate,
                reason: "the \(role) certificate is not a valid DER X.509 certificate",
                context: String(describing: error)
            )
        }
    }
}

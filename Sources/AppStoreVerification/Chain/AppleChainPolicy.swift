import SwiftASN1
import X509

/// The App Store's own rules for a signing chain, on top of RFC 5280: exactly leaf, intermediate and root; Apple's
/// marker extensions on the leaf and the intermediate; key usage fit for each role.
struct AppleChainPolicy: VerifierPolicy {
    /// Marks a certificate as an App Store receipt-signing leaf.
    static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Marks a certificate as Apple's Worldwide Developer Relations intermediate.
    static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        Self.leafMarkerOID, Self.intermediateMarkerOID, .X509ExtensionID.keyUsage,
    ]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, App Store chains have 3")
        }
        let leaf = chain[0]
        let intermediate = chain[1]
        guard leaf.extensions[oid: Self.leafMarkerOID] != nil else {
            return .failsToMeetPolicy(
                reason: "the leaf certificate lacks Apple's marker extension \(Self.leafMarkerOID)"
            )
        }
        guard intermediate.extensions[oid: Self.intermediateMarkerOID] != nil else {
            return .failsToMeetPolicy(
                reason: "the intermediate certificate lacks Apple's marker extension \(Self.intermediateMarkerOID)"
            )
        }
        do {
            if let usage = try leaf.extensions.keyUsage, !usage.digitalSignature {
                return .failsToMeetPolicy(reason: "the leaf certificate's key usage does not allow signatures")
            }
            for issuer in chain.dropFirst() {
                if let usage = try issuer.extensions.keyUsage, !usage.keyCertSign {
                    return .failsToMeetPolicy(
                        reason: "an issuing certificate's key usage does not allow certificate signing"
                    )
                }
            }
        } catch {
            return .failsToMeetPolicy(reason: "a key usage extension is malformed")
        }
        return .meetsPolicy
    }
}

import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JWS in compact serialization (`header.payload.signature`), split and decoded but not yet verified.
struct CompactJWS {
    /// The decoded protected header.
    let header: JWSHeader
    /// The decoded payload bytes (JSON).
    let payload: [UInt8]
    /// The decoded signature; for ES256, `r || s` (64 bytes).
    let signature: [UInt8]
    /// The SHA-256 digest of the signing input (the ASCII of `header.payload`), which ES256 signs.
    let signingInputDigest: SHA256Digest

    /// Splits and decodes `compact`.
    /// - Throws: `VERIFICATION_FAILURE` when it is not three base64url segments with a JSON object header.
    init(_ compact: String) throws(VerificationError) {
        var compact = compact
        // Work on the string's own bytes: no splitting into substrings, no copies before decoding.
        let parts = compact.withUTF8 {
            bytes -> (header: [UInt8]?, payload: [UInt8]?, signature: [UInt8]?, SHA256Digest)? in
            guard let segments = CompactJWSSegments(bytes) else { return nil }
            func decoded(_ range: Range<Int>) -> [UInt8]? {
                Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[range]))
            }
            // ES256 signs the ASCII of `header.payload`.
            let signingInput = UnsafeBufferPointer(rebasing: bytes[..<segments.payload.upperBound])
            return (
                decoded(segments.header),
                decoded(segments.payload),
                decoded(segments.signature),
                Self.digest(UnsafeRawBufferPointer(signingInput))
            )
        }
        guard let parts else {
            throw .verificationFailure("the signed value is not a JWS in compact serialization")
        }
        guard let headerBytes = parts.header, let payload = parts.payload, let signature = parts.signature else {
            throw .verificationFailure("a JWS segment is not valid base64url")
        }
        do {
            self.header = try JSONDecoder().decode(JWSHeader.self, from: Data(headerBytes))
        } catch {
            throw .verificationFailure("the JWS header is not a JSON object of the expected shape")
        }
        self.payload = payload
        self.signature = signature
        self.signingInputDigest = parts.3
    }
}

extension CompactJWS {
    fileprivate static func digest(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(bufferPointer: bytes)
        return hasher.finalize()
    }
}

/// The protected header fields the App Store sets.
struct JWSHeader: Decodable {
    /// The signature algorithm; the App Store uses ES256 only.
    var alg: String?
    /// The certificate chain, leaf first, as standard base64 DER.
    var x5c: [String]?
}

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

    /// Splits and decodes `compact`; a header whose exact text `memo` remembers is not decoded again.
    /// - Throws: `VERIFICATION_FAILURE` when it is not three base64url segments with a JSON object header.
    init(_ compact: String, memo: JWSHeaderSegmentMemo<JWSHeader>? = nil) throws(VerificationError) {
        var compact = compact
        // Work on the string's own bytes: no splitting into substrings, no copies before decoding.
        let decoded = compact.withUTF8 { bytes -> Result<CompactJWS, VerificationError> in
            guard let segments = CompactJWSSegments(bytes) else {
                return .failure(.verificationFailure("the signed value is not a JWS in compact serialization"))
            }
            func decoded(_ range: Range<Int>) -> [UInt8]? {
                Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[range]))
            }
            let invalidBase64 = VerificationError.verificationFailure("a JWS segment is not valid base64url")
            guard let payload = decoded(segments.payload), let signature = decoded(segments.signature) else {
                return .failure(invalidBase64)
            }
            let headerSegment = UnsafeBufferPointer(rebasing: bytes[segments.header])
            let header: JWSHeader
            if let remembered = memo?.value(for: headerSegment) {
                header = remembered
            } else {
                guard let headerBytes = decoded(segments.header) else { return .failure(invalidBase64) }
                guard let decodedHeader = try? JSONDecoder().decode(JWSHeader.self, from: Data(headerBytes)) else {
                    return .failure(.verificationFailure("the JWS header is not a JSON object of the expected shape"))
                }
                header = decodedHeader
                memo?.remember(header, for: headerSegment)
            }
            // ES256 signs the ASCII of `header.payload`.
            let signingInput = UnsafeBufferPointer(rebasing: bytes[..<segments.payload.upperBound])
            return .success(
                CompactJWS(
                    header: header,
                    payload: payload,
                    signature: signature,
                    signingInputDigest: Self.digest(UnsafeRawBufferPointer(signingInput))
                )
            )
        }
        self = try decoded.get()
    }

    private init(header: JWSHeader, payload: [UInt8], signature: [UInt8], signingInputDigest: SHA256Digest) {
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInputDigest = signingInputDigest
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
struct JWSHeader: Decodable, Sendable {
    /// The signature algorithm; the App Store uses ES256 only.
    var alg: String?
    /// The certificate chain, leaf first, as standard base64 DER.
    var x5c: [String]?
}

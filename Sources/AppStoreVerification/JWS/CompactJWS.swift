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
    /// The bytes the signature covers: the ASCII of `header.payload`.
    let signingInput: Substring.UTF8View

    /// Splits and decodes `compact`.
    /// - Throws: `VERIFICATION_FAILURE` when it is not three base64url segments with a JSON object header.
    init(_ compact: String) throws(VerificationError) {
        let segments = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw .verificationFailure("the signed value is not a JWS in compact serialization")
        }
        guard let headerBytes = Base64URL.decode(segments[0]),
            let payload = Base64URL.decode(segments[1]),
            let signature = Base64URL.decode(segments[2])
        else {
            throw .verificationFailure("a JWS segment is not valid base64url")
        }
        do {
            self.header = try JSONDecoder().decode(JWSHeader.self, from: Data(headerBytes))
        } catch {
            throw .verificationFailure("the JWS header is not a JSON object of the expected shape")
        }
        self.payload = payload
        self.signature = signature
        self.signingInput = compact.utf8[segments[0].startIndex..<segments[1].endIndex]
    }
}

extension CompactJWS {
    /// The SHA-256 digest of the signing input, hashed in place rather than copied out of the string.
    var signingInputDigest: SHA256Digest {
        var hasher = SHA256()
        let hashedInPlace: Void? = signingInput.withContiguousStorageIfAvailable { bytes in
            hasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
        }
        if hashedInPlace == nil {
            hasher.update(data: Array(signingInput))
        }
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

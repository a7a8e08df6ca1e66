import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Signs JSON payloads as ES256 JWS in compact serialization, with an `x5c` header, as the App Store does.
package struct JWSSigner: Sendable {
    /// The key that signs.
    package let key: P256.Signing.PrivateKey
    /// The `x5c` header value (leaf first).
    package let x5c: [String]
    /// The `alg` header value; anything but ES256 makes a JWS verifiers must reject.
    package let algorithm: String

    private let encodedHeader: String

    /// Creates a signer; pass another `algorithm` only to make JWS that verifiers must reject.
    package init(key: P256.Signing.PrivateKey, x5c: [String], algorithm: String = "ES256") throws {
        self.key = key
        self.x5c = x5c
        self.algorithm = algorithm
        struct Header: Encodable {
            var alg: String
            var x5c: [String]
        }
        self.encodedHeader = Base64URL.encode(try JSONEncoder().encode(Header(alg: algorithm, x5c: x5c)))
    }

    /// Signs with the leaf of `pki`.
    package init(pki: TestPKI) throws {
        try self.init(key: pki.leafKey, x5c: pki.x5c)
    }

    /// Signs the JSON encoding of `payload`.
    package func sign(_ payload: some Encodable) throws -> String {
        try sign(payloadJSON: JSONEncoder().encode(payload))
    }

    /// Signs `payloadJSON` as given.
    package func sign(payloadJSON: some DataProtocol) throws -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(Data(payloadJSON))
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

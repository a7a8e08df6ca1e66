import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A throwaway certificate hierarchy shaped like the App Store's: a P-384 root and intermediate signing with
/// SHA-384, and a P-256 leaf for ES256, each carrying Apple's marker extensions.
///
/// For tests, demos, load generation and benchmarks only: trust its ``root`` in place of Apple's root to verify
/// what ``NotificationSigner`` produces. Never trust it in production.
package struct TestPKI: Sendable {
    /// Settings for building a test PKI.
    package struct Configuration: Sendable {
        /// The start of every certificate's validity.
        package var notValidBefore: Date
        /// The end of the root's and intermediate's validity.
        package var notValidAfter: Date
        /// The end of the leaf's validity; set it early to test expired leaves.
        package var leafNotValidAfter: Date
        /// Whether the leaf carries Apple's leaf marker extension.
        package var leafHasAppleMarker: Bool
        /// Whether the intermediate carries Apple's intermediate marker extension.
        package var intermediateHasAppleMarker: Bool
        /// A name to tell several test PKIs apart in certificate subjects.
        package var name: String

        /// Creates settings; by default every certificate is valid 2024-2034 and carries Apple's markers.
        package init(
            notValidBefore: Date = Date(timeIntervalSince1970: 1_704_067_200),  // 2024-01-01
            notValidAfter: Date = Date(timeIntervalSince1970: 2_019_686_400),  // 2034-01-01
            leafNotValidAfter: Date? = nil,
            leafHasAppleMarker: Bool = true,
            intermediateHasAppleMarker: Bool = true,
            name: String = "asnp Test"
        ) {
            self.notValidBefore = notValidBefore
            self.notValidAfter = notValidAfter
            self.leafNotValidAfter = leafNotValidAfter ?? notValidAfter
            self.leafHasAppleMarker = leafHasAppleMarker
            self.intermediateHasAppleMarker = intermediateHasAppleMarker
            self.name = name
        }
    }

    /// The self-signed root to trust.
    package let root: Certificate
    /// The intermediate, signed by the root.
    package let intermediate: Certificate
    /// The leaf, signed by the intermediate; its key signs JWS.
    package let leaf: Certificate
    /// The leaf's private key.
    package let leafKey: P256.Signing.PrivateKey

    /// The `x5c` header value: leaf, intermediate, root as standard base64 DER.
    package let x5c: [String]

    /// Builds a fresh hierarchy with new keys.
    package init(configuration: Configuration = .init()) throws {
        let rootKey = P384.Signing.PrivateKey()
        let intermediateKey = P384.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(configuration.name) Root CA - G3") }
        let intermediateName = try DistinguishedName { CommonName("\(configuration.name) WWDR CA - G6") }
        let leafName = try DistinguishedName { CommonName("\(configuration.name) Prod ECC App Store Signing") }

        let rootKeyID = Self.keyIdentifier(rootKey.publicKey.derRepresentation)
        let intermediateKeyID = Self.keyIdentifier(intermediateKey.publicKey.derRepresentation)
        let root = try Self.issue(
            subject: rootName,
            key: .init(rootKey.publicKey),
            notValidBefore: configuration.notValidBefore,
            notValidAfter: configuration.notValidAfter,
            issuer: rootName,
            issuerKey: .init(rootKey),
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(keyIdentifier: rootKeyID)
            }
        )
        let intermediate = try Self.issue(
            subject: intermediateName,
            key: .init(intermediateKey.publicKey),
            notValidBefore: configuration.notValidBefore,
            notValidAfter: configuration.notValidAfter,
            issuer: rootName,
            issuerKey: .init(rootKey),
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(keyIdentifier: intermediateKeyID)
                AuthorityKeyIdentifier(keyIdentifier: rootKeyID)
                if configuration.intermediateHasAppleMarker {
                    Self.marker(TestPKI.intermediateMarkerOID)
                }
            }
        )
        let leaf = try Self.issue(
            subject: leafName,
            key: .init(leafKey.publicKey),
            notValidBefore: configuration.notValidBefore,
            notValidAfter: configuration.leafNotValidAfter,
            issuer: intermediateName,
            issuerKey: .init(intermediateKey),
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(keyIdentifier: Self.keyIdentifier(leafKey.publicKey.derRepresentation))
                AuthorityKeyIdentifier(keyIdentifier: intermediateKeyID)
                if configuration.leafHasAppleMarker {
                    Self.marker(TestPKI.leafMarkerOID)
                }
            }
        )
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
        self.x5c = try [leaf, intermediate, root].map { Data(try Self.der($0)).base64EncodedString() }
    }

    /// The root as DER, to write where a `--root-cert` option reads it.
    package func rootDER() throws -> [UInt8] {
        try Self.der(root)
    }

    static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// A certificate signed with ECDSA over SHA-384, as Apple's chain is.
    private static func issue(
        subject: DistinguishedName,
        key: Certificate.PublicKey,
        notValidBefore: Date,
        notValidAfter: Date,
        issuer: DistinguishedName,
        issuerKey: Certificate.PrivateKey,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: key,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: extensions,
            issuerPrivateKey: issuerKey
        )
    }

    /// A key identifier: the SHA-1 of the key's DER SubjectPublicKeyInfo (RFC 5280 §4.2.1.2 allows any unique
    /// value). Strict verifiers such as OpenSSL's, under Apple's Python library, require key identifiers.
    private static func keyIdentifier(_ publicKeyDER: Data) -> ArraySlice<UInt8> {
        ArraySlice(Insecure.SHA1.hash(data: publicKeyDER))
    }

    /// Apple's marker extensions hold an ASN.1 NULL.
    private static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    private static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}

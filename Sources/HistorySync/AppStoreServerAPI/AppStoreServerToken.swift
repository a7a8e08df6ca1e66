import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bearer tokens of App Store Server API requests: ES256 JWTs signed with the App Store Connect API key
/// (header `alg`, `kid`, `typ`; claims `iss`, `iat`, `exp`, `aud` = `appstoreconnect-v1`, `bid`). Apple asks for a
/// new token per request; ECDSA signatures are randomized, so no two tokens are alike even within one second.
struct AppStoreServerToken: Sendable {
    static let audience = "appstoreconnect-v1"

    private let configuration: AppStoreServerAPIConfiguration

    init(configuration: AppStoreServerAPIConfiguration) {
        self.configuration = configuration
    }

    /// A new token, valid for the configured lifetime from `now`.
    func make(now: Date = Date()) throws(HistorySyncError) -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        return try sign(issuedAt: issuedAt, expires: issuedAt + Int(configuration.tokenLifetime.components.seconds))
    }

    private func sign(issuedAt: Int, expires: Int) throws(HistorySyncError) -> String {
        struct Header: Encodable {
            var alg = "ES256"
            var kid: String
            var typ = "JWT"
        }
        struct Claims: Encodable {
            var iss: String
            var iat: Int
            var exp: Int
            var aud: String
            var bid: String
        }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let header = Base64URL.encode(try encoder.encode(Header(kid: configuration.keyID)))
            let claims = Base64URL.encode(
                try encoder.encode(
                    Claims(
                        iss: configuration.issuerID,
                        iat: issuedAt,
                        exp: expires,
                        aud: Self.audience,
                        bid: configuration.bundleID
                    )
                )
            )
            let signingInput = header + "." + claims
            let signature = try configuration.privateKey.signature(for: Data(signingInput.utf8))
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw HistorySyncError(.invalidConfiguration, "could not sign an API token: \(error)")
        }
    }
}

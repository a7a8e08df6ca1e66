import AppStoreModels
import Crypto
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bearer tokens of App Store Server API requests: ES256 JWTs signed with the App Store Connect API key
/// (header `alg`, `kid`, `typ`; claims `iss`, `iat`, `exp`, `aud` = `appstoreconnect-v1`, `bid`), made once and
/// reused until a minute before they expire.
final class AppStoreServerToken: Sendable {
    static let audience = "appstoreconnect-v1"

    private let configuration: AppStoreServerAPIConfiguration
    private let current = Mutex<(token: String, expires: Date)?>(nil)

    init(configuration: AppStoreServerAPIConfiguration) {
        self.configuration = configuration
    }

    /// A token valid for at least another minute.
    func value(now: Date = Date()) throws(HistorySyncError) -> String {
        if let current = current.withLock({ $0 }), current.expires.timeIntervalSince(now) > 60 {
            return current.token
        }
        let lifetime = Double(configuration.tokenLifetime.components.seconds)
        let issuedAt = Int(now.timeIntervalSince1970)
        let expires = issuedAt + Int(lifetime)
        let token = try sign(issuedAt: issuedAt, expires: expires)
        current.withLock { $0 = (token, Date(timeIntervalSince1970: TimeInterval(expires))) }
        return token
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

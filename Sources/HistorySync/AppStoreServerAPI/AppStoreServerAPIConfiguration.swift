import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How to reach and authenticate to the App Store Server API for one app: its App Store Connect API key (In-App
/// Purchase key: a .p8 private key, its key id and the team's issuer id) and the app's bundle id.
package struct AppStoreServerAPIConfiguration: Sendable {
    /// Apple's production and sandbox servers.
    package static let productionURL = "https://api.storekit.apple.com"
    package static let sandboxURL = "https://api.storekit-sandbox.apple.com"

    package var keyID: String
    package var issuerID: String
    package var bundleID: String
    package var privateKey: P256.Signing.PrivateKey
    /// Base URLs by environment (tests point them at a local server).
    package var productionBaseURL = Self.productionURL
    package var sandboxBaseURL = Self.sandboxURL
    /// How long a bearer token is valid; Apple accepts up to an hour. Each request signs a new one.
    package var tokenLifetime: Duration = .seconds(20 * 60)
    /// One request, answer included.
    package var requestTimeout: Duration = .seconds(30)

    /// - Parameter privateKeyPEM: the .p8 file's text (`-----BEGIN PRIVATE KEY-----`).
    package init(keyID: String, issuerID: String, bundleID: String, privateKeyPEM: String) throws(HistorySyncError) {
        guard !keyID.isEmpty, !issuerID.isEmpty, !bundleID.isEmpty else {
            throw HistorySyncError(.invalidConfiguration, "the API key id, issuer id and bundle id must all be set")
        }
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw HistorySyncError(
                .invalidConfiguration,
                "the App Store Connect API private key is not a P-256 key in PEM (.p8) form"
            )
        }
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// The base URL for `environment` (Xcode and local testing have no server: nil).
    package func baseURL(for environment: AppStoreEnvironment) -> String? {
        switch environment {
        case .production: productionBaseURL
        case .sandbox: sandboxBaseURL
        default: nil
        }
    }
}

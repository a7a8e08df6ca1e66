/// An app and environment: what every answer of the API is about, and what a key may read.
package struct APIScope: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The app's bundle identifier, as the notifications carry it (`bundle_id`).
    package var bundleId: String
    /// Apple's environment, as the notifications carry it (`environment`).
    package var environment: String

    package init(bundleId: String, environment: String) {
        self.bundleId = bundleId
        self.environment = environment
    }

    /// Apple's environments: "Sandbox", "Production", and StoreKit testing's "Xcode" and "LocalTesting"
    /// (https://developer.apple.com/documentation/appstoreservernotifications/environment). V1 notifications'
    /// `PROD` is stored as `Production`.
    package static let environments = ["Production", "Sandbox", "Xcode", "LocalTesting"]

    package var description: String { "\(bundleId) (\(environment))" }

    package static func < (lhs: APIScope, rhs: APIScope) -> Bool {
        (lhs.bundleId, lhs.environment) < (rhs.bundleId, rhs.environment)
    }
}

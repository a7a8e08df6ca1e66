import AppStoreModels
import AppStoreVerification
import PipelineContract

/// The verifier for each configured app and environment, all sharing one chain verifier (and so one cache of
/// verified certificate chains).
///
/// A raw message's headers name its app and environment (from the ingress route); the body is verified against that
/// app's bundle id and app Apple id and that environment, so a sandbox body posted to the production URL, or one app's
/// body on another app's route, is rejected.
package struct VerifierDirectory: Sendable {
    /// Why a message's app or environment has no verifier: a rejection status and reason.
    package struct Unavailable: Error, Sendable, Hashable {
        package var status: String
        package var reason: String
    }

    private struct Key: Hashable {
        var app: String
        var environment: AppStoreEnvironment
    }

    /// V2 (or unlabelled) bodies, checked against the app's bundle id and, in Production, its app Apple id.
    private let verifiers: [Key: Result<NotificationVerifier, Unavailable>]
    /// V1 bodies, which carry no app Apple id: an app needs none to have its V1 bodies verified in Production.
    private let v1Verifiers: [Key: Result<NotificationVerifier, Unavailable>]
    /// The configured apps' names by bundle id (the first app of a bundle id): what metrics label an event with.
    let appNames: [String: String]

    /// Verifiers for `apps` in Production and Sandbox, trusting the chain verifier's roots.
    ///
    /// An app without an app Apple id gets no Production verifier for V2 bodies (Apple's rules require the id
    /// there): its Production V2 bodies are rejected with `APP_NOT_CONFIGURED`, to be replayed once it is configured.
    package init(apps: [PipelineApp], chainVerifier: ChainVerifier, maximumBodySize: Int = 1 << 20) {
        var verifiers: [Key: Result<NotificationVerifier, Unavailable>] = [:]
        var v1Verifiers: [Key: Result<NotificationVerifier, Unavailable>] = [:]
        for app in apps {
            for environment in [AppStoreEnvironment.production, .sandbox] {
                let key = Key(app: app.name, environment: environment)
                func verifier(_ policy: () throws -> VerificationPolicy) -> Result<NotificationVerifier, Unavailable> {
                    do {
                        let configuration = NotificationVerifier.Configuration(
                            policy: try policy(),
                            sharedSecrets: app.sharedSecrets,
                            maximumBodySize: maximumBodySize
                        )
                        return .success(
                            NotificationVerifier(configuration: configuration, chainVerifier: chainVerifier)
                        )
                    } catch {
                        return .failure(
                            Unavailable(
                                status: Self.appNotConfigured,
                                reason: "app '\(app.name)' cannot verify \(environment) notifications: \(error)"
                            )
                        )
                    }
                }
                verifiers[key] = verifier {
                    try VerificationPolicy(bundleId: app.bundleID, appAppleId: app.appAppleID, environment: environment)
                }
                v1Verifiers[key] =
                    app.sharedSecrets.isEmpty
                    ? .failure(
                        Unavailable(
                            status: Self.appNotConfigured,
                            reason: "app '\(app.name)' has no shared secret to verify V1 notifications"
                        )
                    )
                    : verifier { try VerificationPolicy.v1(bundleId: app.bundleID, environment: environment) }
            }
        }
        self.verifiers = verifiers
        self.v1Verifiers = v1Verifiers
        self.appNames = Dictionary(apps.map { ($0.bundleID, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// The verifier for `app`'s bodies of `version` in `environment`, or why there is none. A V1 verifier must be
    /// given V1 bodies only (``NotificationVersion/v1``).
    package func verifier(
        app: String,
        environment: AppStoreEnvironment,
        version: NotificationVersion?
    ) -> Result<NotificationVerifier, Unavailable> {
        let key = Key(app: app, environment: environment)
        return (version == .v1 ? v1Verifiers[key] : verifiers[key])
            ?? .failure(
                Unavailable(
                    status: Self.unknownApp,
                    reason: "no app '\(app)' with environment \(environment) is configured in this worker"
                )
            )
    }

    /// The apps, environments and versions that cannot be verified, for a warning at startup.
    package var unavailable: [Unavailable] {
        Set(
            (Array(verifiers.values) + Array(v1Verifiers.values)).compactMap { result in
                if case .failure(let unavailable) = result { return unavailable }
                return nil
            }
        ).sorted { $0.reason < $1.reason }
    }

    /// A message for an app this worker does not know.
    static let unknownApp = "UNKNOWN_APP"
    /// A message this worker's settings for its app cannot verify (no app Apple id, no shared secret).
    static let appNotConfigured = "APP_NOT_CONFIGURED"
    /// The rejection statuses that are this worker's configuration, not the notification: fix the settings, then
    /// replay them (`asnp replay rejected --status ...`).
    package static let configurationStatuses: Set<String> = [unknownApp, appNotConfigured]
}

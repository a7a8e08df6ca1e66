import AppStoreModels
import HistorySync
import KafkaClient
import NotificationStore
import PipelineContract
import PipelineStatus
import PipelineTracing
import PostgresRuntime

/// Everything `asnp history sync` reads from the settings.
package struct HistoryRoleSettings {
    /// An app the reconciler syncs, with its App Store Server API key.
    package struct App {
        package var app: PipelineApp
        package var api: AppStoreServerAPIConfiguration
    }

    /// The apps to sync: the one named, or every app with an API key.
    package var apps: [App]
    /// The environments to sync each app in: the one named, or `history.environments`.
    package var environments: [AppStoreEnvironment]
    /// Requests a second to Apple for one app in one environment (`history.requestsPerSecond`).
    package var requestsPerSecond: Double
    /// How much of what earlier turns covered each periodic turn asks Apple for again (`history.secondLookSeconds`,
    /// ``HistorySync/Configuration/secondLook``; zero: none).
    package var secondLook: Duration
    package var cluster: KafkaClusterConfiguration
    package var rawTopic: String
    package var database: NotificationStoreConfiguration
    /// Where the periodic sync (`--every`) serves its probes and metrics (`history.statusHost`, `.statusPort`).
    package var status: StatusServerConfiguration
    /// `tracing.*`, the service named `asnp-history`.
    package var tracing: TracingConfiguration
}

extension PipelineSettings {
    /// The reconciler's settings: the app named `appName` (or every app with an App Store Connect API key:
    /// `apps.{name}.api.keyId`, `.issuerId`, `.privateKey` or `.privateKeyFile`), in `environment` (or every one of
    /// `history.environments`), `history.*` (the status port included, read whether or not the sync is periodic),
    /// Kafka and the database.
    package func historyRole(appName: String?, environment: AppStoreEnvironment? = nil) throws -> HistoryRoleSettings {
        let configured = try apps()
        var selected: [PipelineApp]
        if let appName {
            guard let named = configured.first(where: { $0.name == appName }) else {
                throw SettingsError(
                    key: "apps.names",
                    reason: "has no app '\(appName)' (it has \(configured.map(\.name)))"
                )
            }
            selected = [named]
        } else {
            selected = try configured.filter { try string("apps.\($0.name).api.keyId") != nil }
            // No app has a key: name what the first one lacks.
            if selected.isEmpty { selected = Array(configured.prefix(1)) }
        }
        let apps = try selected.map { app in
            HistoryRoleSettings.App(app: app, api: try historyAPI(for: app))
        }
        let environments: [AppStoreEnvironment]
        if let environment {
            environments = [environment]
        } else {
            environments = try (stringArray("history.environments") ?? ["production", "sandbox"]).map { name in
                switch name.lowercased() {
                case "production": .production
                case "sandbox": .sandbox
                default:
                    throw SettingsError(
                        key: "history.environments",
                        reason: "has '\(name)'; Apple keeps history for production and sandbox only"
                    )
                }
            }
            guard !environments.isEmpty else {
                throw SettingsError(key: "history.environments", reason: "is empty; name production, sandbox or both")
            }
        }
        let rate = try double("history.requestsPerSecond") ?? 4
        guard rate > 0, rate.isFinite else {
            throw SettingsError(key: "history.requestsPerSecond", reason: "must be a positive number, not \(rate)")
        }
        return HistoryRoleSettings(
            apps: apps,
            environments: Array(Set(environments)).sorted { $0.rawValue < $1.rawValue },
            requestsPerSecond: rate,
            secondLook: try duration("history.secondLookSeconds", allowsZero: true)
                ?? HistorySync.Configuration().secondLook,
            cluster: try kafkaCluster(clientID: "asnp-history"),
            rawTopic: try rawTopic(),
            database: try database(),
            status: try status(section: "history"),
            tracing: try tracing(serviceName: "asnp-history")
        )
    }

    /// `app`'s App Store Server API key and `history.productionUrl`, `.sandboxUrl`.
    private func historyAPI(for app: PipelineApp) throws -> AppStoreServerAPIConfiguration {
        let prefix = "apps.\(app.name).api"
        guard let keyID = try string(prefix + ".keyId"), !keyID.isEmpty else {
            throw SettingsError(key: prefix + ".keyId", reason: "is required: the In-App Purchase key's id")
        }
        guard let issuerID = try string(prefix + ".issuerId"), !issuerID.isEmpty else {
            throw SettingsError(key: prefix + ".issuerId", reason: "is required: the team's issuer id")
        }
        guard let privateKey = try secret(prefix + ".privateKey"), !privateKey.isEmpty else {
            throw SettingsError(
                key: prefix + ".privateKey",
                reason: "is required: the .p8 key (or \(prefix).privateKeyFile)"
            )
        }
        var api: AppStoreServerAPIConfiguration
        do {
            api = try AppStoreServerAPIConfiguration(
                keyID: keyID,
                issuerID: issuerID,
                bundleID: app.bundleID,
                privateKeyPEM: privateKey
            )
        } catch {
            throw SettingsError(key: prefix + ".privateKey", reason: error.reason)
        }
        api.productionBaseURL = try string("history.productionUrl") ?? api.productionBaseURL
        api.sandboxBaseURL = try string("history.sandboxUrl") ?? api.sandboxBaseURL
        return api
    }
}

import HistorySync
import KafkaClient
import NotificationStore
import PipelineContract
import PipelineStatus

/// Everything `asnp history sync` reads from the settings.
package struct HistoryRoleSettings {
    package var app: PipelineApp
    package var api: AppStoreServerAPIConfiguration
    package var requestsPerSecond: Double
    package var cluster: KafkaClusterConfiguration
    package var rawTopic: String
    package var database: NotificationStoreConfiguration
    /// Where the periodic sync (`--every`) serves its probes and metrics (`history.statusHost`, `.statusPort`).
    package var status: StatusServerConfiguration
}

extension PipelineSettings {
    /// The reconciler's settings for the app named `appName` (or the only app): its App Store Connect API key
    /// (`apps.{name}.api.keyId`, `.issuerId`, `.privateKey` or `.privateKeyFile`), `history.*` (the status port
    /// included, read whether or not the sync is periodic), Kafka and the database.
    package func historyRole(appName: String?) throws -> HistoryRoleSettings {
        let apps = try apps()
        let app: PipelineApp
        if let appName {
            guard let named = apps.first(where: { $0.name == appName }) else {
                throw SettingsError(key: "apps.names", reason: "has no app '\(appName)' (it has \(apps.map(\.name)))")
            }
            app = named
        } else {
            guard apps.count == 1, let only = apps.first else {
                throw SettingsError(key: "--app", reason: "is required when several apps are configured")
            }
            app = only
        }
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
        let rate = try double("history.requestsPerSecond") ?? 4
        guard rate > 0, rate.isFinite else {
            throw SettingsError(key: "history.requestsPerSecond", reason: "must be a positive number, not \(rate)")
        }
        return HistoryRoleSettings(
            app: app,
            api: api,
            requestsPerSecond: rate,
            cluster: try kafkaCluster(clientID: "asnp-history"),
            rawTopic: try rawTopic(),
            database: try database(),
            status: try status(section: "history")
        )
    }
}

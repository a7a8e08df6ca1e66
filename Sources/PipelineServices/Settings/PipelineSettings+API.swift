import PipelineStatus
import PipelineTracing
import PostgresRuntime
import ReadAPI

/// Everything `asnp api` reads from the settings.
package struct APIRoleSettings {
    package var api: ReadAPIConfiguration
    /// `api.database.*` when `api.database.url` is set (a replica, a PgBouncer), else `database.*`; named
    /// `asnp-api` in `pg_stat_activity`, with `api.timeoutSeconds` (5 s) per read.
    package var database: PostgresConfiguration
    /// `api.statusHost`, `api.statusPort`: the probes and the Prometheus scrape, off the API's port.
    package var status: StatusServerConfiguration
    /// `tracing.*`, the service named `asnp-api`: a span per request.
    package var tracing: TracingConfiguration

    package init(
        api: ReadAPIConfiguration,
        database: PostgresConfiguration,
        status: StatusServerConfiguration,
        tracing: TracingConfiguration = TracingConfiguration(serviceName: "asnp-api")
    ) {
        self.api = api
        self.database = database
        self.status = status
        self.tracing = tracing
    }
}

extension PipelineSettings {
    /// The read API's settings, each checked.
    package func apiRole() throws -> APIRoleSettings {
        guard let keysFile = try string("api.keysFile"), !keysFile.isEmpty else {
            throw SettingsError(
                key: "api.keysFile",
                reason: "is required: the JSON file of the API keys' hashes and scopes (`asnp api key new` makes one)"
            )
        }
        var api = ReadAPIConfiguration(keysFile: keysFile)
        api.host = try string("api.host") ?? api.host
        api.port = try int("api.port") ?? api.port
        api.keysReloadInterval = try duration("api.keysReloadSeconds") ?? api.keysReloadInterval
        api.requestsPerSecond = try double("api.requestsPerSecond") ?? api.requestsPerSecond
        api.burst = try double("api.burst") ?? api.burst
        api.defaultPageSize = try int("api.defaultPageSize") ?? api.defaultPageSize
        api.maximumPageSize = try int("api.maxPageSize") ?? api.maximumPageSize
        api.maximumCustomerPurchases = try int("api.maxCustomerPurchases") ?? api.maximumCustomerPurchases
        api.idleTimeout = try duration("api.idleTimeoutSeconds") ?? api.idleTimeout
        do {
            try api.validate()
        } catch {
            throw SettingsError(key: "api", reason: error.reason)
        }
        var database = try database(section: try secret("api.database.url") != nil ? "api.database" : "database")
        database.applicationName = "asnp-api"
        database.operationTimeout = try duration("api.timeoutSeconds") ?? .seconds(5)
        let status = try status(section: "api")
        if status.port != 0, status.port == api.port {
            throw SettingsError(
                key: "api.statusPort",
                reason: "is \(status.port), the API's api.port: the probes and /metrics need a port of their own"
            )
        }
        return APIRoleSettings(
            api: api,
            database: database,
            status: status,
            tracing: try tracing(serviceName: "asnp-api")
        )
    }
}

import Foundation
import Logging
import PipelineStatus
import PipelineTracing
import PostgresRuntime
import ReadAPI
import ServiceLifecycle

/// `asnp api`: the read API, its keys file, its database reads and its status endpoints.
package struct APIRole: PipelineRole {
    package let reader: StateReader
    package let keys: APIKeyringFile
    package let server: ReadAPIServer
    /// The probes and `/metrics`, on `api.statusPort`.
    package let statusServer: StatusServer
    /// The requests' spans and their export (`tracing.*`).
    package let tracing: TracingBackend

    /// Stopped in reverse: the server answers the requests in progress, then the status endpoints close, the keys
    /// file is no longer read, the pool closes, and the last spans are exported.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        (tracing.service.map { [.init(service: $0)] } ?? [])
            + [.init(service: reader), .init(service: keys), .init(service: statusServer), .init(service: server)]
    }
}

/// Builds the read API from its settings; the keys file is read now (an unusable one fails here). `onListening` is
/// called with the API's port once it accepts connections, `onStatusListening` with the status port.
package func buildAPI(
    _ settings: APIRoleSettings,
    logger: Logger,
    onStatusListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
    onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
) throws -> APIRole {
    logger.info(
        "Starting the read API",
        metadata: [
            "database": "\(settings.database.endpoint)/\(settings.database.database)",
            "api.keysFile": "\(settings.api.keysFile)",
        ]
    )
    let metrics = ReadAPIMetrics()
    let keys = try APIKeyringFile(
        path: settings.api.keysFile,
        reloadEvery: settings.api.keysReloadInterval,
        metrics: metrics,
        logger: logger
    )
    let reader = StateReader(configuration: settings.database.runtimeConfiguration, logger: logger)
    let tracing = try TracingBackend.make(settings.tracing, logger: logger)
    let server = ReadAPIServer(
        configuration: settings.api,
        reader: reader,
        keys: keys,
        metrics: metrics,
        tracer: tracing.tracer,
        logger: logger,
        onListening: onListening
    )
    return APIRole(
        reader: reader,
        keys: keys,
        server: server,
        statusServer: server.statusServer(configuration: settings.status, onListening: onStatusListening),
        tracing: tracing
    )
}

/// The read API of `asnp dev`: on 127.0.0.1:`port` over `database`, with a key made now for `bundleId` in both
/// environments, its hash written to `keysFile`; its status endpoints on a free port. Returns the role and the key.
package func buildDevelopmentAPI(
    database: PostgresConfiguration,
    bundleId: String,
    port: Int,
    keysFile: String,
    tracing: TracingConfiguration?,
    logger: Logger,
    onListening: @escaping @Sendable (_ port: Int) async -> Void
) throws -> (role: APIRole, key: String) {
    let (key, sha256) = APIKeyring.generateKey()
    let entry = APIKeysFile.Entry(
        id: "dev",
        sha256: sha256,
        scopes: [.init(bundleId: bundleId, environments: ["Sandbox", "Production"])]
    )
    try JSONEncoder().encode(APIKeysFile(keys: [entry])).write(to: URL(fileURLWithPath: keysFile))
    var configuration = ReadAPIConfiguration(keysFile: keysFile)
    configuration.host = "127.0.0.1"
    configuration.port = port
    var reads = database
    reads.applicationName = "asnp-dev-api"
    // Traced with the rest when the stack is, under the role's own name.
    var apiTracing = tracing ?? TracingConfiguration(serviceName: "asnp-api")
    apiTracing.serviceName = "asnp-api"
    let settings = APIRoleSettings(
        api: configuration,
        database: reads,
        status: StatusServerConfiguration(host: "127.0.0.1", port: 0),
        tracing: apiTracing
    )
    return (try buildAPI(settings, logger: logger, onListening: onListening), key)
}

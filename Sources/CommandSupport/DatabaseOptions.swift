import ArgumentParser
import Foundation
import NotificationStore
import PostgresRuntime

/// The PostgreSQL options the commands share.
package struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: ArgumentHelp(
            "The PostgreSQL URL, libpq style (postgres://user:password@host:port/database?sslmode=...). "
                + "Default: $DATABASE_URL.",
            valueName: "url"
        )
    )
    package var databaseURL: String?

    @Option(help: "How long one database operation may take, in seconds, waiting for a connection included.")
    package var databaseTimeout: Int = 30

    package init() {}

    /// The store settings, or a usage error naming what is missing or wrong.
    package func configuration() throws -> NotificationStoreConfiguration {
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
            throw ValidationError("give --database-url or set DATABASE_URL")
        }
        do {
            var configuration = try NotificationStoreConfiguration(url: url)
            configuration.operationTimeout = .seconds(databaseTimeout)
            return configuration
        } catch {
            throw ValidationError(error.description)
        }
    }
}

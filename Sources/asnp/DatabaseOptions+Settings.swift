import CommandSupport
import Foundation
import NotificationStore
import PipelineServices
import PostgresRuntime

extension DatabaseOptions {
    /// The database of `--database-url`, or of `DATABASE_URL` when no `--config` file names one; otherwise the one
    /// the services' settings name (`settings`: the file, the environment and `*File` secrets).
    func configuration(
        configFile: String?,
        settings: () async throws -> PipelineSettings
    ) async throws -> NotificationStoreConfiguration {
        if databaseURL != nil || configFile == nil && ProcessInfo.processInfo.environment["DATABASE_URL"] != nil {
            return try configuration()
        }
        return try await settings().database()
    }
}

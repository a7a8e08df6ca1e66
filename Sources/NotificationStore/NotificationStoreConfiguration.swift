import PostgresRuntime

/// Settings of a ``NotificationStore``: the runtime's PostgreSQL settings, which know no table
/// (``PostgresRuntime/PostgresConfiguration``: the URL, TLS, pool size and timeouts). Its parse errors are
/// ``PostgresRuntime/PostgresConfigurationError``s.
package typealias NotificationStoreConfiguration = PostgresConfiguration

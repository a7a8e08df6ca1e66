import ArgumentParser
import CommandSupport
import KafkaClient
import NotificationStore
import PostgresRuntime

// A command that fails because Kafka or PostgreSQL did (down, refusing, timing out) could not do its work: exit 3,
// as Docs/cli.md says, so that a script tells it from a command line it must change (2). Before, anything not an
// ExitCode ended as a usage error, `asnp replay rejected` with PostgreSQL stopped among them.

extension KafkaError: CommandFailure {
    package var exitCode: ExitCode { code == .invalidConfiguration ? CLIExit.usage : CLIExit.failed }
}

extension NotificationStoreError: CommandFailure {
    package var exitCode: ExitCode { code == .invalidConfiguration ? CLIExit.usage : CLIExit.failed }
}

extension PostgresConfigurationError: CommandFailure {
    package var exitCode: ExitCode { code == .invalidConfiguration ? CLIExit.usage : CLIExit.failed }
}

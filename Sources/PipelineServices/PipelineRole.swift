import Logging
import ServiceLifecycle
import UnixSignals

/// A role of the pipeline built and ready to run: its services in the order a `ServiceGroup` starts them (and stops
/// them in reverse). The commands run a role with ``run(logger:gracefulShutdownSignals:)``; tests run the same
/// services in-process.
package protocol PipelineRole {
    /// The services, in start order.
    var services: [ServiceGroupConfiguration.ServiceConfiguration] { get }
}

extension PipelineRole {
    /// Runs the services in one group until they end or a signal in `gracefulShutdownSignals` shuts them down.
    package func run(logger: Logger, gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint]) async throws {
        try await serviceGroup(logger: logger, gracefulShutdownSignals: gracefulShutdownSignals).run()
    }

    /// The group ``run(logger:gracefulShutdownSignals:)`` runs; tests keep it to shut the role down gracefully.
    package func serviceGroup(logger: Logger, gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint])
        -> ServiceGroup
    {
        ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: gracefulShutdownSignals,
                logger: logger
            )
        )
    }
}

import Ingress
import KafkaClient
import NotificationStore
import PipelineContract
import PipelineStatus
import PipelineTracing
import PostgresRuntime
import Worker
import X509

/// Everything `asnp ingress` reads from the settings.
package struct IngressRoleSettings {
    package var apps: [PipelineApp]
    package var ingress: IngressConfiguration
    package var producer: KafkaProducerConfiguration
    /// `ingress.statusHost`, `ingress.statusPort`: the probes and the Prometheus scrape, off the public port.
    package var status: StatusServerConfiguration
    /// `tracing.*`, the service named `asnp-ingress`.
    package var tracing: TracingConfiguration
}

/// Everything `asnp worker` reads from the settings.
package struct WorkerRoleSettings {
    package var apps: [PipelineApp]
    package var cluster: KafkaClusterConfiguration
    package var worker: WorkerConfiguration
    package var database: NotificationStoreConfiguration
    package var trustedRoots: [Certificate]
    package var status: StatusServerConfiguration
    /// `tracing.*`, the service named `asnp-worker`.
    package var tracing: TracingConfiguration
}

extension PipelineSettings {
    /// The ingress's settings, each checked; the commands and the Deploy tests read them the same way.
    package func ingressRole() throws -> IngressRoleSettings {
        let apps = try apps()
        let ingress = try ingress(apps: apps)
        let producer = ingress.producerConfiguration(cluster: try kafkaCluster(clientID: "asnp-ingress"))
        let status = try status(section: "ingress")
        // Both on one port would bind twice; and the point of the status port is that the public one lacks them.
        if status.port != 0, status.port == ingress.port {
            throw SettingsError(
                key: "ingress.statusPort",
                reason: "is \(status.port), the public ingress.port: the probes and /metrics need a port of their own"
            )
        }
        return IngressRoleSettings(
            apps: apps,
            ingress: ingress,
            producer: producer,
            status: status,
            tracing: try tracing(serviceName: "asnp-ingress")
        )
    }

    /// The worker's settings, each checked.
    package func workerRole() throws -> WorkerRoleSettings {
        let apps = try apps()
        let cluster = try kafkaCluster(clientID: "asnp-worker")
        return WorkerRoleSettings(
            apps: apps,
            cluster: cluster,
            worker: try worker(cluster: cluster),
            database: try database(),
            trustedRoots: try trustedRoots(),
            status: try workerStatus(),
            tracing: try tracing(serviceName: "asnp-worker")
        )
    }
}

import Ingress
import KafkaClient
import NotificationStore
import PipelineContract
import PipelineStatus
import Worker
import X509

/// Everything `asnp ingress` reads from the settings.
package struct IngressRoleSettings {
    package var apps: [PipelineApp]
    package var ingress: IngressConfiguration
    package var producer: KafkaProducerConfiguration
}

/// Everything `asnp worker` reads from the settings.
package struct WorkerRoleSettings {
    package var apps: [PipelineApp]
    package var cluster: KafkaClusterConfiguration
    package var worker: WorkerConfiguration
    package var database: NotificationStoreConfiguration
    package var trustedRoots: [Certificate]
    package var status: StatusServerConfiguration
}

extension PipelineSettings {
    /// The ingress's settings, each checked; the commands and the Deploy tests read them the same way.
    package func ingressRole() throws -> IngressRoleSettings {
        let apps = try apps()
        let ingress = try ingress(apps: apps)
        let producer = ingress.producerConfiguration(cluster: try kafkaCluster(clientID: "asnp-ingress"))
        return IngressRoleSettings(apps: apps, ingress: ingress, producer: producer)
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
            status: try workerStatus()
        )
    }
}

import Foundation
import LoadGeneration

// How a step's counters are read from the running pipeline.
extension EndToEndStep.RawTopic {
    static func take(_ pipeline: EndToEndPipeline) async throws -> Self {
        Self(
            batches: try await pipeline.ingressMetric("asnp_ingress_raw_topic_batches_total"),
            messages: try await pipeline.ingressMetric("asnp_ingress_raw_topic_messages_total"),
            bytes: try await pipeline.ingressMetric("asnp_ingress_raw_topic_bytes_total")
        )
    }
}

extension EndToEndStep.CPU.Sample {
    static func take(_ pipeline: EndToEndPipeline, postmaster: Int32?) -> Self {
        Self(
            pipeline: pipeline.roles.reduce(into: [:]) { seconds, process in
                seconds[process.role, default: 0] += ProcessStats.cpuSeconds(of: process.pid)
            },
            postgres: postmaster.flatMap { ProcessStats.postgresCPUSeconds(postmaster: $0) },
            loadGenerator: ProcessStats.cpuSeconds(of: getpid()),
            instant: .now
        )
    }
}

extension EndToEndStep.Memory {
    static func take(_ processes: [(role: EndToEndStep.Role, pid: Int32)]) -> Self {
        var memory = Self(ingress: 0, worker: 0, mockBroker: 0)
        for (role, pid) in processes {
            let bytes = ProcessStats.residentBytes(of: pid)
            switch role {
            case .ingress: memory.ingress = bytes
            case .workers: memory.worker = max(memory.worker, bytes)
            case .mockBroker: memory.mockBroker = bytes
            }
        }
        return memory
    }
}

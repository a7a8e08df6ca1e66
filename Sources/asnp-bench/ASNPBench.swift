import ArgumentParser
import CommandSupport
import Foundation

/// `asnp-bench`: reproducible performance measurements and load generation, apart from the `asnp` binary that ships.
/// Every figure is reported against a baseline measured in the same run.
@main
struct ASNPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asnp-bench",
        abstract: "Measure the pipeline's performance against a baseline measured in the same run; generate load.",
        discussion: """
            The commands that run pipeline processes (e2e, worker, ingress, kafka, soak) start the `asnp` binary built \
            beside this one: build both (`swift build -c release`) before measuring.
            """,
        version: BuildVersion.description,
        subcommands: [
            BenchVerifyCommand.self, BenchKafkaCommand.self, BenchStoreCommand.self, BenchIngressCommand.self,
            BenchWorkerCommand.self, BenchEndToEndCommand.self, BenchMoveBodiesCommand.self, LoadgenCommand.self,
            SoakCommand.self, BenchAPICommand.self,
        ]
    )

    static func main() async {
        await runAsRoot()
    }

    /// The `asnp` binary beside this one, which the benchmarks start as separate processes (as deployed).
    static func pipelineExecutable() throws -> URL {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let asnp = own.deletingLastPathComponent().appendingPathComponent("asnp")
        guard FileManager.default.isExecutableFile(atPath: asnp.path) else {
            throw BenchFailure("\(asnp.path) is missing: build it too (swift build -c release builds both)")
        }
        return asnp
    }
}

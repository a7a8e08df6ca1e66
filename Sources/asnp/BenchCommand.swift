import ArgumentParser

/// `asnp bench`: reproducible performance measurements.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the pipeline's performance against a baseline measured in the same run.",
        subcommands: [
            BenchVerifyCommand.self, BenchKafkaCommand.self, BenchStoreCommand.self, BenchIngressCommand.self,
            BenchWorkerCommand.self, BenchEndToEndCommand.self,
        ]
    )
}

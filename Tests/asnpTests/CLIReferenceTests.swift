import AppStoreTestSupport
import ArgumentParser
import Foundation
import Testing

@testable import asnp
@testable import asnp_bench

/// Docs/cli.md is every command's `--help`, so the reference cannot drift from the commands.
@Suite("Docs/cli.md: the command-line reference")
struct CLIReferenceTests {
    static let file = Fixtures.packageRoot.appendingPathComponent("Docs/cli.md")

    @Test("Docs/cli.md holds the --help of every asnp and asnp-bench command, as the commands print it")
    func referenceMatchesHelp() throws {
        let expected = Self.reference()
        if ProcessInfo.processInfo.environment["ASNP_UPDATE_CLI_DOCS"] == "1" {
            try Data(expected.utf8).write(to: Self.file)
        }
        let written = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(
            written == expected,
            "Docs/cli.md is out of step with --help: run ASNP_UPDATE_CLI_DOCS=1 swift test --filter CLIReferenceTests"
        )
    }

    @Test("The reference names every subcommand of both executables")
    func everyCommandListed() {
        let reference = Self.reference()
        for path in Self.commandPaths(ASNP.self) + Self.commandPaths(ASNPBench.self) {
            #expect(reference.contains("\n## `\(path.name)`\n"), "\(path.name) is missing")
        }
    }

    /// The Markdown of Docs/cli.md.
    static func reference() -> String {
        var text = """
            # Command-line reference

            Every command's `--help`, generated: `ASNP_UPDATE_CLI_DOCS=1 swift test --filter CLIReferenceTests`
            rewrites this file, and the same test fails when it is out of step. `asnp` is what operators run (the
            image ships it alone); `asnp-bench` holds the benchmarks and the load generator
            ([benchmarks.md](benchmarks.md)). Settings for the services: [Config/README.md](../Config/README.md).

            Exit status, where a command says nothing else: 0 done; 1 an input was rejected; 2 the command line or
            the settings cannot be used; 3 the command could not do its work (Kafka or PostgreSQL down, refusing or
            timing out): the same command may succeed later.

            """
        for root in [ASNP.self, ASNPBench.self] as [any ParsableCommand.Type] {
            for path in commandPaths(root) {
                let help = root.helpMessage(for: path.command, columns: 100)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                    .map { $0.replacing(/\s+$/, with: "") }
                    .joined(separator: "\n")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                text += "\n## `\(path.name)`\n\n```text\n\(help)\n```\n"
            }
        }
        return text
    }

    /// The root and every subcommand below it, depth first, with their full names (`asnp history sync`).
    static func commandPaths(_ root: any ParsableCommand.Type) -> [(name: String, command: any ParsableCommand.Type)] {
        func walk(_ command: any ParsableCommand.Type, prefix: String) -> [(String, any ParsableCommand.Type)] {
            let name = prefix.isEmpty ? command._commandName : prefix + " " + command._commandName
            return [(name, command)] + command.configuration.subcommands.flatMap { walk($0, prefix: name) }
        }
        return walk(root, prefix: "")
    }
}

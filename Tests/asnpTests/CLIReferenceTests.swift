import AppStoreTestSupport
import ArgumentParser
import Foundation
import Testing

@testable import asnp

/// Docs/cli.md is every command's `--help`, so the reference cannot drift from the commands.
@Suite("Docs/cli.md: the command-line reference", .tags(.process))
struct CLIReferenceTests {
    static let file = Fixtures.packageRoot.appendingPathComponent("Docs/cli.md")

    @Test("Docs/cli.md holds the --help of every asnp and asnp-bench command, as the commands print it")
    func referenceMatchesHelp() async throws {
        let expected = try await Self.reference()
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
    func everyCommandListed() async throws {
        let reference = try await Self.reference()
        let names = Self.commandPaths(ASNP.self).map(\.name) + (try await Self.benchCommandPaths())
        #expect(names.contains("asnp-bench soak"), "the bench's commands are read from the binary")
        for name in names {
            #expect(reference.contains("\n## `\(name)`\n"), "\(name) is missing")
        }
    }

    /// The Markdown of Docs/cli.md.
    static func reference() async throws -> String {
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
        for path in commandPaths(ASNP.self) {
            text += section(path.name, help: ASNP.helpMessage(for: path.command, columns: 100))
        }
        // asnp-bench is not linked into the tests: its help is what the binary prints, 100 columns wide as above.
        for name in try await benchCommandPaths() {
            let arguments = name.split(separator: " ").dropFirst().map(String.init) + ["--help"]
            let help = try await ASNPProcess.run(
                arguments,
                environment: ["COLUMNS": "100"],
                executable: ASNPProcess.benchExecutable
            )
            #expect(help.status == 0, "asnp-bench \(arguments.joined(separator: " ")): \(help.standardError)")
            text += section(name, help: help.standardOutput)
        }
        return text
    }

    /// One command's section: its name, then its help with no trailing spaces.
    private static func section(_ name: String, help: String) -> String {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map { $0.replacing(/\s+$/, with: "") }
        let trimmed = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        return "\n## `\(name)`\n\n```text\n\(trimmed)\n```\n"
    }

    /// `asnp-bench` and every subcommand below it, depth first, as the binary's `--experimental-dump-help` lists them.
    static func benchCommandPaths() async throws -> [String] {
        let dump = try await ASNPProcess.runBench(["--experimental-dump-help"])
        let root = try #require(
            (try JSONSerialization.jsonObject(with: Data(dump.standardOutput.utf8)) as? [String: Any])?["command"]
                as? [String: Any],
            "asnp-bench --experimental-dump-help: \(dump.standardError)"
        )
        func walk(_ command: [String: Any], prefix: String) -> [String] {
            let name = (prefix.isEmpty ? "" : prefix + " ") + (command["commandName"] as? String ?? "?")
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            return [name]
                + subcommands.filter { $0["commandName"] as? String != "help" }.flatMap { walk($0, prefix: name) }
        }
        return walk(root, prefix: "")
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

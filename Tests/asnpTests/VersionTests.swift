import AppStoreTestSupport
import CommandSupport
import Foundation
import Testing

/// `--version` says which release and which commit a binary is (ADR 0017): the release is the VERSION file's.
@Suite("asnp --version and asnp-bench --version: the VERSION file's version and the commit built from", .tags(.process))
struct VersionTests {
    static func versionFile() throws -> String {
        try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("asnp --version and asnp-bench --version print the VERSION file's version and the image's commit")
    func versionFromTheVersionFile() async throws {
        let version = try Self.versionFile()
        // Semantic versioning, as CHANGELOG.md's releases.
        #expect(version.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?/) != nil, "\(version)")
        let commit = "4b1a7d5c0ffee0000000000000000000000000ab"
        for executable in [ASNPProcess.executable, ASNPProcess.benchExecutable] {
            let run = try await ASNPProcess.run(
                ["--version"],
                environment: [BuildVersion.commitVariable: commit],
                executable: executable
            )
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput == "\(version) (commit \(commit))\n", "\(executable.lastPathComponent)")
        }
    }

    @Test("without the image's commit the binary says it does not know it")
    func unknownCommit() {
        #expect(BuildVersion.commit(environment: [:]) == "unknown")
        #expect(BuildVersion.commit(environment: [BuildVersion.commitVariable: " "]) == "unknown")
        #expect(BuildVersion.commit(environment: [BuildVersion.commitVariable: "abc123"]) == "abc123")
    }

    @Test("CHANGELOG.md has the VERSION file's release and an Unreleased section (Keep a Changelog)")
    func changelogNamesTheRelease() throws {
        let version = try Self.versionFile()
        let changelog = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("CHANGELOG.md"),
            encoding: .utf8
        )
        let releases = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") }
        #expect(releases.first == "## [Unreleased]")
        #expect(releases.dropFirst().first?.hasPrefix("## [\(version)] - ") == true, "\(releases)")
    }
}

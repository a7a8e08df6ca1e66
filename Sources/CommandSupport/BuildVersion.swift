import Foundation

/// What `asnp --version` and `asnp-bench --version` print: the release and the commit it was built from (ADR 0017).
package enum BuildVersion {
    /// The top-level VERSION file's version. SwiftPM cannot read that file into the program without a plugin, so it is
    /// written here too; `VersionTests` fails when the two differ.
    package static let version = "1.0.0"

    /// The environment variable the image sets from `docker build --build-arg COMMIT=...` (Deploy/Dockerfile).
    package static let commitVariable = "ASNP_COMMIT"

    /// The commit the image was built from, or "unknown" (a local build: its checkout says which).
    package static func commit(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let commit = environment[commitVariable]?.trimmingCharacters(in: .whitespaces) ?? ""
        return commit.isEmpty ? "unknown" : commit
    }

    /// `1.0.0 (commit 4b1a7d5...)`.
    package static var description: String { "\(version) (commit \(commit()))" }
}

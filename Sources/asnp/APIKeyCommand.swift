import ArgumentParser
import Foundation
import ReadAPI

/// `asnp api key`: keys for the read API.
struct APIKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Make keys for the read API.",
        subcommands: [APIKeyNewCommand.self]
    )
}

/// `asnp api key new`: a new key, and its entry for the keys file.
struct APIKeyNewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Make a key: print it once, and the entry of the keys file that lets it read.",
        discussion: """
            The key goes to the app backend that will use it (as `Authorization: Bearer <key>`) and is stored \
            nowhere else; the keys file (api.keysFile) holds only its SHA-256. Add the entry to the file's "keys" \
            array; the API reads the file again within api.keysReloadSeconds. To rotate a key, add a new one for the \
            same scopes, move the client to it, then remove the old entry (Docs/api.md).
            """
    )

    @Option(help: "The key's name in logs and metrics: 1 to 64 of letters, digits, '.', '-', '_'.")
    var id: String

    @Option(
        name: .customLong("scope"),
        help:
            "What it may read: <bundleId>:<environment>[,<environment>...], e.g. com.example.notes:Production,Sandbox."
    )
    var scopes: [String]

    @Option(help: "Its sustained requests per second on each replica (default: the API's api.requestsPerSecond).")
    var requestsPerSecond: Double?

    @Option(help: "Its burst (default: the API's api.burst).")
    var burst: Double?

    func validate() throws {
        guard APIKey.isValidID(id) else {
            throw ValidationError("--id must be 1 to 64 of letters, digits, '.', '-', '_'")
        }
        guard !scopes.isEmpty else { throw ValidationError("name at least one --scope") }
        _ = try parsedScopes()
    }

    func run() throws {
        let (key, sha256) = APIKeyring.generateKey()
        let entry = APIKeysFile.Entry(
            id: id,
            sha256: sha256,
            scopes: try parsedScopes(),
            requestsPerSecond: requestsPerSecond,
            burst: burst
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        print(
            """
            key (give it to the client once; it is kept nowhere else):
            \(key)

            entry for the "keys" array of the keys file (api.keysFile):
            \(String(decoding: try encoder.encode(entry), as: UTF8.self))
            """
        )
    }

    private func parsedScopes() throws -> [APIKeysFile.Entry.Scope] {
        do {
            return try scopes.map { scope throws(ReadAPIError) in try APIKeysFile.Entry.Scope(parsing: scope) }
        } catch {
            throw ValidationError("--scope: \(error.reason)")
        }
    }
}

import Configuration
import Foundation
import Synchronization
import SystemPackage

/// The pipeline's settings, read with swift-configuration from the environment, then a JSON file, then defaults.
///
/// Keys are dotted camelCase (`ingress.maxBodyBytes`); in the environment the same key is upper snake case
/// (`INGRESS_MAX_BODY_BYTES`), in the file a nested object (`{"ingress": {"maxBodyBytes": 262144}}`).
/// Config/README.md lists every key. Unlike swift-configuration's own readers, a value that is present but not of
/// the right type is an error naming the key, never silently the default.
package struct PipelineSettings {
    package let reader: ConfigReader
    /// Every key a section asked for, set or not (the Deploy tests check manifests set only keys that are read).
    package let keysRead = KeysRead()

    /// Reads the environment (the process's, or `environment`), and `file` (JSON) when given; the environment wins.
    package static func load(file: String?, environment: [String: String]? = nil) async throws -> PipelineSettings {
        var providers: [any ConfigProvider] = [
            environment.map { EnvironmentVariablesProvider(environmentVariables: $0) } ?? EnvironmentVariablesProvider()
        ]
        if let file {
            guard FileManager.default.fileExists(atPath: file) else {
                throw SettingsError(key: "--config", reason: "the configuration file \(file) does not exist")
            }
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
            } catch {
                throw SettingsError(key: "--config", reason: "\(file) is not a valid JSON configuration file: \(error)")
            }
        }
        return PipelineSettings(reader: ConfigReader(providers: providers))
    }

    /// The environment variable that sets `key`, as swift-configuration's environment provider names it: `_` where
    /// a lowercase letter meets an uppercase one, `_` for anything not a letter or digit, upper case.
    package static func environmentName(of key: String) -> String {
        var name = ""
        var previous: Character?
        for character in key {
            if let previous, previous.isLowercase, character.isUppercase {
                name += "_"
            }
            name += character.isLetter || character.isNumber ? character.uppercased() : "_"
            previous = character
        }
        return name
    }

    package func string(_ key: String, isSecret: Bool = false) throws -> String? {
        try optional(key) { try reader.requiredString(forKey: ConfigKey(key), isSecret: isSecret) }
    }

    package func int(_ key: String) throws -> Int? {
        try optional(key) { try reader.requiredInt(forKey: ConfigKey(key)) }
    }

    package func double(_ key: String) throws -> Double? {
        try optional(key) { try reader.requiredDouble(forKey: ConfigKey(key)) }
    }

    package func bool(_ key: String) throws -> Bool? {
        try optional(key) { try reader.requiredBool(forKey: ConfigKey(key)) }
    }

    package func stringArray(_ key: String, isSecret: Bool = false) throws -> [String]? {
        try optional(key) { try reader.requiredStringArray(forKey: ConfigKey(key), isSecret: isSecret) }
    }

    /// Seconds as a duration (`ingress.ackTimeoutSeconds: 2.5`); must be positive, or with `allowsZero` not negative.
    package func duration(_ key: String, allowsZero: Bool = false) throws -> Duration? {
        guard let seconds = try double(key) else { return nil }
        guard allowsZero ? seconds >= 0 : seconds > 0, seconds.isFinite else {
            let expected = allowsZero ? "0 or a positive number of seconds" : "a positive number of seconds"
            throw SettingsError(key: key, reason: "must be \(expected), not \(seconds)")
        }
        return .milliseconds(Int64((seconds * 1_000).rounded()))
    }

    /// A secret, from `key` itself or from the file named by `key` + `File` (a mounted Kubernetes secret).
    package func secret(_ key: String) throws -> String? {
        if let value = try string(key, isSecret: true) { return value }
        guard let path = try string(key + "File") else { return nil }
        do {
            return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw SettingsError(key: key + "File", reason: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// Secrets, one per line of the file named by `key` + `File`, or a comma-separated list in `key`.
    package func secrets(_ key: String) throws -> [String] {
        if let values = try stringArray(key, isSecret: true) { return values }
        guard let path = try string(key + "File") else { return [] }
        do {
            return try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        } catch {
            throw SettingsError(key: key + "File", reason: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// Reads a required-style value: missing is nil, anything else that fails is an error naming the key.
    private func optional<Value>(_ key: String, _ read: () throws -> Value) throws -> Value? {
        keysRead.insert(key)
        do {
            return try read()
        } catch {
            // swift-configuration's error type is not public; its message tells a missing value apart.
            if "\(error)".hasPrefix("Missing required config value") { return nil }
            throw SettingsError(key: key, reason: "has a value of the wrong type (\(error))")
        }
    }
}

/// The keys read through one ``PipelineSettings``.
package final class KeysRead: Sendable {
    private let keys = Mutex<Set<String>>([])

    package func insert(_ key: String) {
        keys.withLock { _ = $0.insert(key) }
    }

    package var all: Set<String> { keys.withLock { $0 } }
}

/// A setting that is missing or invalid; the description names the key and its environment variable.
package struct SettingsError: Error, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, `INVALID_CONFIGURATION`.
        package var description: String { rawValue }

        /// A setting is missing or invalid.
        case invalidConfiguration = "INVALID_CONFIGURATION"
    }

    /// What went wrong, machine-readable.
    package var code: Code { .invalidConfiguration }
    /// The setting's key (`kafka.bootstrapServers`), or a command-line option (`--apps`).
    package var key: String
    /// What is wrong with it.
    package var reason: String

    package init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    /// `INVALID_CONFIGURATION: key (environment KEY) reason`.
    package var description: String {
        if key.hasPrefix("-") { return "\(code): \(reason)" }
        return "\(code): \(key) (environment \(PipelineSettings.environmentName(of: key))) \(reason)"
    }
}

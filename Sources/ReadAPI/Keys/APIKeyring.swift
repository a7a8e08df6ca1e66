import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The keys the API accepts, from the keys file: each key's SHA-256 and what it may read. A presented key is hashed
/// and looked up by its hash, so neither the file nor the process's memory holds a usable key.
///
/// The file (a Kubernetes secret, `api.keysFile`):
///
/// ```json
/// {"keys": [{"id": "billing-backend-2026-11", "sha256": "<64 hex digits>",
///            "scopes": [{"bundleId": "com.example.notes", "environments": ["Production", "Sandbox"]}],
///            "requestsPerSecond": 50, "burst": 100}]}
/// ```
///
/// `requestsPerSecond` and `burst` are optional (the API's defaults). Two entries may carry different ids and the
/// same scopes: that is how a key is rotated (Docs/api.md).
package struct APIKeyring: Sendable {
    /// The keys, by their digest.
    private let byDigest: [[UInt8]: APIKey]

    /// The keys, in the file's order.
    package let keys: [APIKey]

    /// A keyring of `keys`; their ids and digests must be unique.
    package init(keys: [APIKey]) throws(ReadAPIError) {
        var byDigest: [[UInt8]: APIKey] = [:]
        var ids: Set<String> = []
        for key in keys {
            guard ids.insert(key.id).inserted else {
                throw ReadAPIError(code: .invalidKeys, reason: "the key id '\(key.id)' appears twice")
            }
            guard byDigest.updateValue(key, forKey: key.digest) == nil else {
                throw ReadAPIError(code: .invalidKeys, reason: "the key '\(key.id)' has the hash of another key")
            }
        }
        self.byDigest = byDigest
        self.keys = keys
    }

    /// The keys the JSON document `json` lists (the format above).
    package init(json: some Collection<UInt8>) throws(ReadAPIError) {
        let file: APIKeysFile
        do {
            file = try JSONDecoder().decode(APIKeysFile.self, from: Data(json))
        } catch {
            throw ReadAPIError(
                code: .invalidKeys,
                reason: "the keys file is not the JSON the API expects ({\"keys\": [...]}, Docs/api.md)",
                context: "\(error)"
            )
        }
        try self.init(keys: file.keys.map { entry throws(ReadAPIError) in try entry.key() })
    }

    /// The key whose SHA-256 is that of `presented`, or nil.
    package func key(presented: some StringProtocol) -> APIKey? {
        byDigest[Self.digest(of: presented)]
    }

    /// SHA-256 of a key's UTF-8 bytes: what the keys file holds.
    package static func digest(of key: some StringProtocol) -> [UInt8] {
        Array(SHA256.hash(data: Array(key.utf8)))
    }

    /// A new key: `asnp_` and 43 base64url characters (32 random bytes), with its SHA-256 in hex for the keys file.
    package static func generateKey() -> (key: String, sha256: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let key = "asnp_" + Base64URL.encode(bytes)
        return (key, hex(digest(of: key)))
    }

    /// Lowercase hex.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The keys file as JSON: `{"keys": [Entry, ...]}`.
package struct APIKeysFile: Codable {
    /// One key's entry, as `asnp api key new` prints it.
    package struct Entry: Codable {
        package struct Scope: Codable {
            package var bundleId: String
            package var environments: [String]

            package init(bundleId: String, environments: [String]) {
                self.bundleId = bundleId
                self.environments = environments
            }

            /// A scope written `<bundleId>:<environment>[,<environment>...]`, as `asnp api key new --scope` takes
            /// it, e.g. `com.example.notes:Production,Sandbox`; each environment one of Apple's.
            package init(parsing text: String) throws(ReadAPIError) {
                let parts = text.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, !parts[0].isEmpty else {
                    throw ReadAPIError(
                        code: .invalidKeys,
                        reason: "a scope is <bundleId>:<environment>[,<environment>...], not '\(text)'"
                    )
                }
                let environments = parts[1].split(separator: ",").map(String.init)
                guard !environments.isEmpty else {
                    throw ReadAPIError(code: .invalidKeys, reason: "the scope '\(text)' names no environment")
                }
                for environment in environments where !APIScope.environments.contains(environment) {
                    throw ReadAPIError(
                        code: .invalidKeys,
                        reason: "the scope '\(text)' names '\(environment)', not one of "
                            + APIScope.environments.joined(separator: ", ")
                    )
                }
                self.init(bundleId: String(parts[0]), environments: environments)
            }
        }

        package var id: String
        /// Lowercase hex of the key's SHA-256.
        package var sha256: String
        package var scopes: [Scope]
        package var requestsPerSecond: Double?
        package var burst: Double?

        package init(
            id: String,
            sha256: String,
            scopes: [Scope],
            requestsPerSecond: Double? = nil,
            burst: Double? = nil
        ) {
            self.id = id
            self.sha256 = sha256
            self.scopes = scopes
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }

        /// The key this entry describes, each field checked.
        package func key() throws(ReadAPIError) -> APIKey {
            func invalid(_ reason: String) -> ReadAPIError {
                ReadAPIError(code: .invalidKeys, reason: "the key '\(id)' \(reason)")
            }
            guard APIKey.isValidID(id) else {
                throw ReadAPIError(
                    code: .invalidKeys,
                    reason: "a key id must be 1 to 64 of letters, digits, '.', '-' and '_'; one is '\(id.prefix(80))'"
                )
            }
            guard let digest = Self.bytes(hex: sha256), digest.count == 32 else {
                throw invalid("has a sha256 that is not 64 hex digits (the SHA-256 of the key, not the key)")
            }
            guard !scopes.isEmpty, scopes.allSatisfy({ !$0.bundleId.isEmpty && !$0.environments.isEmpty }) else {
                throw invalid("needs scopes, each a bundleId with environments")
            }
            var allowed: Set<APIScope> = []
            for scope in scopes {
                for environment in scope.environments {
                    guard APIScope.environments.contains(environment) else {
                        throw invalid(
                            "names the environment '\(environment)', not one of "
                                + APIScope.environments.joined(separator: ", ")
                        )
                    }
                    allowed.insert(APIScope(bundleId: scope.bundleId, environment: environment))
                }
            }
            if let requestsPerSecond, !(requestsPerSecond > 0) { throw invalid("needs a positive requestsPerSecond") }
            if let burst, !(burst >= 1) { throw invalid("needs a burst of at least 1") }
            return APIKey(
                id: id,
                digest: digest,
                scopes: allowed,
                requestsPerSecond: requestsPerSecond,
                burst: burst
            )
        }

        private static func bytes(hex: String) -> [UInt8]? {
            let digits = Array(hex.lowercased().utf8)
            guard digits.count % 2 == 0 else { return nil }
            func value(_ digit: UInt8) -> UInt8? {
                switch digit {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
                default: nil
                }
            }
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: digits.count, by: 2) {
                guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
                bytes.append(high << 4 | low)
            }
            return bytes
        }
    }

    package var keys: [Entry]

    package init(keys: [Entry]) {
        self.keys = keys
    }
}

import CoreMetrics
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The keyring of the keys file, read at start and again every ``ReadAPIConfiguration/keysReloadInterval``: a
/// rotated Kubernetes secret (the kubelet updates a mounted secret in place) takes effect without a restart. A file
/// that cannot be read or parsed later keeps the keyring in use, logged and counted
/// (`asnp_api_keys_reload_failures_total`).
package final class APIKeyringFile: Service, Sendable {
    package let path: String
    private let interval: Duration
    private let metrics: ReadAPIMetrics
    private let logger: Logger
    private let state: Mutex<(keyring: APIKeyring, contents: [UInt8])>

    /// Reads `path` now; throws ``ReadAPIError/Code/invalidKeys`` when it cannot be used.
    package init(path: String, reloadEvery interval: Duration, metrics: ReadAPIMetrics, logger: Logger)
        throws(ReadAPIError)
    {
        self.path = path
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
        let contents = try Self.read(path)
        let keyring = try APIKeyring(json: contents)
        state = Mutex((keyring, contents))
        metrics.keys.record(keyring.keys.count)
        logger.info("API keys read", metadata: ["api.keys": "\(keyring.keys.map(\.id))", "file": "\(path)"])
    }

    /// The keyring in use.
    package var keyring: APIKeyring { state.withLock(\.keyring) }

    /// Reads the file again every interval until a graceful shutdown.
    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: self.interval)
                    self.reload()
                }
            }
        } catch is CancellationError {
            return
        }
    }

    /// Reads the file; a changed, valid one replaces the keyring.
    package func reload() {
        do {
            let contents = try Self.read(path)
            guard contents != state.withLock(\.contents) else { return }
            let keyring = try APIKeyring(json: contents)
            state.withLock { $0 = (keyring, contents) }
            metrics.keys.record(keyring.keys.count)
            logger.notice("API keys changed", metadata: ["api.keys": "\(keyring.keys.map(\.id))", "file": "\(path)"])
        } catch {
            metrics.keyReloadFailures.increment()
            logger.error(
                "The API keys file cannot be used; keeping the keys read before",
                metadata: ["error": "\(error)", "file": "\(path)"]
            )
        }
    }

    private static func read(_ path: String) throws(ReadAPIError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadAPIError(code: .invalidKeys, reason: "cannot read the keys file \(path) (api.keysFile)")
        }
        return Array(data)
    }
}

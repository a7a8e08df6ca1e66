import CRDKafka
import Foundation
import Logging

/// Keeps one client handle's `OAUTHBEARER` token fresh with tokens from ``OAuthTokenClient``.
///
/// librdkafka asks for a token at creation, at 80% of each token's lifetime, and 10 s after a failure, calling the
/// refresh callback on its background thread (`rd_kafka_sasl_background_callbacks_enable`, so no poll loop is needed
/// and producers, consumers and admin clients behave alike). The callback only starts a task and returns: the request
/// runs on Swift's pool and ends with `rd_kafka_oauthbearer_set_token`, or `_set_token_failure` with the reason, which
/// librdkafka reports as an `_AUTHENTICATION` error and retries. librdkafka asks again only after one of the two, so
/// every request ends with one.
final class RDKafkaOAuthBearer: Sendable {
    /// How long librdkafka 2.0.2 waits after `rd_kafka_oauthbearer_set_token_failure` before asking again (fixed in
    /// `rdkafka_sasl_oauthbearer.c`; an existing token is kept meanwhile).
    static let retryInterval: Duration = .seconds(10)

    let tokens: OAuthTokenClient
    private let logger: Logger
    private let state = Locked(StateMachine<Task<Void, Never>>())

    init(tokens: OAuthTokenClient, logger: Logger) {
        self.tokens = tokens
        self.logger = logger
    }

    /// librdkafka asked for a token for `handle` (on its background thread): start a request unless one runs.
    func refresh(handle: OpaquePointer) {
        let target = Handle(pointer: handle)
        state.withLock { state in
            guard state.refreshRequested() else { return }
            state.started(Task { await self.fetch(for: target) })
        }
    }

    /// No token may reach the handle any more: it is about to be destroyed. Waits for a delivery in progress and
    /// cancels a request in flight.
    func detach() {
        state.withLock { $0.detach() }?.cancel()
    }

    private func fetch(for handle: Handle) async {
        let outcome: Result<OAuthToken, OAuthTokenError>
        do throws(OAuthTokenError) {
            outcome = .success(try await tokens.requestToken())
        } catch {
            outcome = .failure(error)
        }
        // Handed over under the lock: detach() takes it before rd_kafka_destroy, so the handle outlives the call
        // (both librdkafka calls only store the token or error and wake the broker threads).
        let delivered: Result<OAuthToken, OAuthTokenError>? = state.withLock { state in
            guard state.finished() else { return nil }
            switch outcome {
            case .success(let token):
                if let refusal = Self.setToken(token, extensions: tokens.credentials.extensions, on: handle.pointer) {
                    let error = OAuthTokenError(code: .rejected, reason: "librdkafka refused the token: \(refusal)")
                    rd_kafka_oauthbearer_set_token_failure(handle.pointer, error.description)
                    return .failure(error)
                }
            case .failure(let error):
                rd_kafka_oauthbearer_set_token_failure(handle.pointer, error.description)
            }
            return outcome
        }
        switch delivered {
        case .success(let token):
            let seconds = Double(token.expiresAtMilliseconds) / 1_000 - Date().timeIntervalSince1970
            logger.info(
                "Kafka OAUTHBEARER token refreshed",
                metadata: [
                    "oauth.principal": "\(token.principal)",
                    "oauth.expires_in_seconds": "\(Int(seconds.rounded()))",
                ]
            )
        case .failure(let error):
            logger.error(
                "Kafka OAUTHBEARER token request failed; librdkafka keeps the current token, if any, and asks again",
                metadata: [
                    "error": "\(error)",
                    "oauth.endpoint": "\(tokens.credentials.tokenEndpoint)",
                    "oauth.retry_in_seconds": "\(Self.retryInterval.components.seconds)",
                ]
            )
        case nil:
            break
        }
    }

    /// Calls `rd_kafka_oauthbearer_set_token`; librdkafka's reason when it refused the token, nil when it took it.
    private static func setToken(
        _ token: OAuthToken,
        extensions: [String: String],
        on handle: OpaquePointer
    ) -> String? {
        let pairs = extensions.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
        let strings = pairs.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        var pointers = strings.map { $0.map { UnsafePointer($0) } }
        let (result, detail) = pointers.withUnsafeMutableBufferPointer { buffer in
            RDKafkaErrorText.with { text, size in
                rd_kafka_oauthbearer_set_token(
                    handle,
                    token.value,
                    token.expiresAtMilliseconds,
                    token.principal,
                    buffer.baseAddress,
                    buffer.count,
                    text,
                    size
                )
            }
        }
        return result == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : detail
    }

    /// The client handle, for the task that delivers the token. `@unchecked Sendable`: librdkafka documents the
    /// token functions as callable from any thread, and ``detach()`` keeps the handle alive while they run.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }
}

/// librdkafka's token refresh callback: hands over to the client's ``RDKafkaOAuthBearer`` and returns.
let rdKafkaOAuthBearerRefreshCallback:
    @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = { handle, _, opaque in
        guard let handle, let bearer = RDKafkaCallbacks.from(opaque)?.oauthBearer else { return }
        bearer.refresh(handle: handle)
    }

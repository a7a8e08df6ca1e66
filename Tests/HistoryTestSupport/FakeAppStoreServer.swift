import AppStoreModels
import AppStoreTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PipelineStatus
import ServiceLifecycle
import Synchronization

/// A stand-in for Apple's Get Notification History endpoint on 127.0.0.1, for one or more apps (bundle ids) in the
/// sandbox (`/inApps/...` or `/sandbox/inApps/...`) and production (`/production/inApps/...`): serves the items
/// Apple had sent by its `now` within the request's window (by `sentAt`) and lists by then (`listedAt`: Apple's
/// history lags its deliveries), oldest first, 20 a page, with opaque pagination tokens; `onlyFailures` narrows to items no attempt delivered. It verifies every bearer token (ES256
/// with the API key's public key; `kid`, `iss`, `aud`, `bid`, `iat`, `exp`) as Apple does, refuses a `startDate`
/// older than it keeps history (4000012: 30 days in the sandbox, 180 in production), answers 500 during an outage
/// of its clock's time, and answers with the faults a test queues.
package final class FakeAppStoreServer: Sendable {
    /// One notification in the history: what Apple sent, when, when its history lists it, and its delivery attempts.
    package struct Item: Sendable {
        package var signedPayload: String
        package var sentAt: Date
        /// From when a request lists it (in the window of its `sentAt`).
        package var listedAt: Date
        package var sendAttempts: [SendAttemptItem]

        /// An item listed from `listedAt` on (default: as soon as it is sent).
        package init(
            signedPayload: String,
            sentAt: Date,
            listedAt: Date? = nil,
            sendAttempts: [SendAttemptItem]? = nil
        ) {
            self.signedPayload = signedPayload
            self.sentAt = sentAt
            self.listedAt = listedAt ?? sentAt
            self.sendAttempts =
                sendAttempts ?? [
                    SendAttemptItem(
                        attemptDate: Int64(sentAt.timeIntervalSince1970 * 1000),
                        sendAttemptResult: .success
                    )
                ]
        }

        /// Whether any attempt delivered it.
        var wasDelivered: Bool { sendAttempts.contains { $0.sendAttemptResult == .success } }
    }

    /// A queued answer that replaces the next request's normal one.
    package enum Fault: Sendable {
        /// 429 with `Retry-After` this far in the future.
        case rateLimited(retryAfter: Duration)
        /// 500 with Apple's GeneralInternalRetryableError.
        case internalRetryable
        /// 401.
        case unauthorized
        /// 400 StartDateTooFarInPastError (4000012), whatever the start.
        case startDateTooFarInPast
    }

    /// What the server saw.
    package struct Log: Sendable {
        package var requests = 0
        /// Requests whose bearer token was missing or invalid (answered 401).
        package var invalidTokens = 0
        /// Distinct valid tokens (a client reusing its token sends one).
        package var tokens: Set<String> = []
        /// Pagination tokens sent, in order (nil for a window's first page).
        package var paginationTokens: [String?] = []
        /// When each request arrived.
        package var arrivals: [ContinuousClock.Instant] = []
        /// The environment each request was for (`Sandbox`, `Production`).
        package var environments: [String] = []
        /// The request bodies.
        package var bodies: [[String: Any]] {
            rawBodies.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
        var rawBodies: [Data] = []
    }

    package static let pageSize = 20

    package let keyID = "TESTKEY123"
    package let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    /// The first app's bundle id.
    package let bundleID: String
    /// The API key the clients sign with (.p8 text).
    package let privateKeyPEM: String
    private let publicKey: P256.Signing.PublicKey
    /// Items by environment (`Sandbox`, `Production`), then bundle id, oldest first.
    private let histories: [String: [String: [Item]]]
    /// Apple's time: what it has sent by now, and how far back it keeps history.
    private let now: @Sendable () -> Date
    private let state = Mutex<
        (log: Log, faults: [Fault], generation: Int, expireAfterPage: Int?, outage: Range<Date>?)
    >((Log(), [], 0, nil, nil))

    /// Serves `sandbox` (and `production`) histories by bundle id, as of `now`.
    package init(
        sandbox: [String: [Item]],
        production: [String: [Item]] = [:],
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let key = P256.Signing.PrivateKey()
        privateKeyPEM = key.pemRepresentation
        publicKey = key.publicKey
        bundleID = sandbox.keys.sorted().first ?? production.keys.sorted().first ?? ""
        let sorted = { (items: [Item]) in items.sorted { $0.sentAt < $1.sentAt } }
        histories = [
            "Sandbox": sandbox.mapValues(sorted),
            "Production": production.mapValues(sorted).merging(sandbox.mapValues { _ in [] }) { items, _ in items },
        ]
        self.now = now
    }

    /// Serves one app's sandbox `history`, its notifications sent evenly over `spread` (default: the 20 days ending
    /// yesterday), each delivered at its first attempt.
    package convenience init(bundleID: String, history: [String], spread: Range<Date>? = nil) {
        let spread = spread ?? Self.twentyDaysToYesterday
        let step = spread.upperBound.timeIntervalSince(spread.lowerBound) / Double(max(history.count, 1))
        let items = history.enumerated().map { index, payload in
            Item(signedPayload: payload, sentAt: spread.lowerBound.addingTimeInterval(step * Double(index)))
        }
        self.init(sandbox: [bundleID: items])
    }

    /// Twenty whole UTC days ending at the start of yesterday: within the 30 days Apple keeps sandbox history.
    package static var twentyDaysToYesterday: Range<Date> {
        let end = ((Date().timeIntervalSince1970 / 86_400).rounded(.down) - 1) * 86_400
        return Date(timeIntervalSince1970: end - 20 * 86_400)..<Date(timeIntervalSince1970: end)
    }

    /// Answers every request 500 while Apple's `now` lies in `outage` (nil: no outage).
    package func setOutage(_ outage: Range<Date>?) {
        state.withLock { $0.outage = outage }
    }

    package var log: Log { state.withLock { $0.log } }

    /// Answers the next requests with `faults`, in order.
    package func queue(_ faults: Fault...) {
        state.withLock { $0.faults += faults }
    }

    /// Makes every token handed out so far expire once a request asks for page `page` (0-based) or later with one.
    package func expireTokens(atPage page: Int) {
        state.withLock { $0.expireAfterPage = page }
    }

    /// Serves on a free port of 127.0.0.1 while `body` runs; `body` gets the base URL.
    package func serve<Result: Sendable>(_ body: (String) async throws -> Result) async throws -> Result {
        let router = Router()
        router.post("/inApps/v1/notifications/history") { request, _ in
            try await self.answer(request, environment: "Sandbox")
        }
        router.post("/sandbox/inApps/v1/notifications/history") { request, _ in
            try await self.answer(request, environment: "Sandbox")
        }
        router.post("/production/inApps/v1/notifications/history") { request, _ in
            try await self.answer(request, environment: "Production")
        }
        // A connection accepted as it stops is closed by AcceptedHTTP1Channel (swift-nio#3481).
        return try await LoopbackServer.serve(
            router,
            server: HTTPServerBuilder { AcceptedHTTP1Channel(responder: $0) },
            label: "fake-app-store"
        ) { port in
            try await body("http://127.0.0.1:\(port)")
        }
    }

    private func answer(_ request: Request, environment: String) async throws -> Response {
        let data = Data((try await request.body.collect(upTo: 1 << 20)).readableBytesView)
        let token = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let paginationToken = request.uri.queryParameters["paginationToken"].map(String.init)
        let bundle = token.flatMap(validBundle)
        let tokenValid = bundle != nil
        let now = self.now()
        let fault: Fault? = state.withLock { state in
            state.log.requests += 1
            state.log.environments.append(environment)
            state.log.arrivals.append(.now)
            state.log.rawBodies.append(data)
            state.log.paginationTokens.append(paginationToken)
            if tokenValid, let token { state.log.tokens.insert(token) } else { state.log.invalidTokens += 1 }
            if let outage = state.outage, outage.contains(now) { return .internalRetryable }
            return state.faults.isEmpty ? nil : state.faults.removeFirst()
        }
        guard let bundle else { return Self.response(.unauthorized, "") }
        switch fault {
        case .rateLimited(let wait):
            let retryAt = Date().addingTimeInterval(
                Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
            )
            var response = Self.appleError(.tooManyRequests, 4_290_000, "Rate limit exceeded.")
            response.headers[HTTPField.Name("Retry-After")!] = String(Int64(retryAt.timeIntervalSince1970 * 1000))
            return response
        case .internalRetryable:
            return Self.appleError(.internalServerError, 5_000_001, "An unknown error occurred. Please try again.")
        case .unauthorized:
            return Self.response(.unauthorized, "")
        case .startDateTooFarInPast:
            return Self.startDateTooFarInPast()
        case nil:
            break
        }
        guard let body = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            body["startDate"] is Int, body["endDate"] is Int
        else {
            return Self.appleError(.badRequest, 4_000_015, "Invalid request start date.")
        }
        let retentionDays: Double = environment == "Production" ? 180 : 30
        let oldest = (now.timeIntervalSince1970 - retentionDays * 86_400) * 1000
        guard let startDate = body["startDate"] as? Int, let endDate = body["endDate"] as? Int else {
            return Self.appleError(.badRequest, 4_000_015, "Invalid request start date.")
        }
        if Double(startDate) < oldest { return Self.startDateTooFarInPast() }
        let window =
            Date(timeIntervalSince1970: Double(startDate) / 1000)..<Date(timeIntervalSince1970: Double(endDate) / 1000)
        let onlyFailures = body["onlyFailures"] as? Bool == true
        let history = (histories[environment]?[bundle] ?? []).filter { item in
            window.contains(item.sentAt) && item.sentAt <= now && item.listedAt <= now
                && !(onlyFailures && item.wasDelivered)
        }
        // Tokens read "g<generation>-p<page>".
        var page = 0
        if let paginationToken {
            let parts = paginationToken.split(separator: "-")
            guard parts.count == 2, let generation = Int(parts[0].dropFirst()), let index = Int(parts[1].dropFirst())
            else { return Self.appleError(.badRequest, 4_000_014, "Invalid pagination token.") }
            let expired = state.withLock { state -> Bool in
                if let after = state.expireAfterPage, index >= after, generation == state.generation {
                    state.generation += 1
                    state.expireAfterPage = nil
                }
                return generation != state.generation
            }
            if expired { return Self.appleError(.badRequest, 4_000_017, "Pagination token expired.") }
            page = index
        }
        let generation = state.withLock { $0.generation }
        let items = history.dropFirst(page * Self.pageSize).prefix(Self.pageSize)
        let hasMore = (page + 1) * Self.pageSize < history.count
        let response = NotificationHistoryResponse(
            notificationHistory: items.map {
                NotificationHistoryResponseItem(signedPayload: $0.signedPayload, sendAttempts: $0.sendAttempts)
            },
            hasMore: hasMore,
            paginationToken: hasMore ? "g\(generation)-p\(page + 1)" : nil
        )
        return Self.response(.ok, String(decoding: try JSONEncoder().encode(response), as: UTF8.self))
    }

    /// Checks a bearer token as Apple would; the app (bundle id) it is for, or nil when Apple would refuse it.
    private func validBundle(_ token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimsBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any],
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        let now = Int(Date().timeIntervalSince1970)
        guard publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)),
            header["alg"] as? String == "ES256", header["kid"] as? String == keyID, header["typ"] as? String == "JWT",
            claims["iss"] as? String == issuerID, claims["aud"] as? String == "appstoreconnect-v1",
            let bundle = claims["bid"] as? String, histories.values.contains(where: { $0[bundle] != nil }),
            let issuedAt = claims["iat"] as? Int, issuedAt <= now + 60,
            let expires = claims["exp"] as? Int, expires > now, expires - issuedAt <= 3600
        else { return nil }
        return bundle
    }

    private static func startDateTooFarInPast() -> Response {
        appleError(.badRequest, 4_000_012, "Invalid request. The start date is earlier than the allowed start date.")
    }

    private static func appleError(_ status: HTTPResponse.Status, _ code: Int, _ message: String) -> Response {
        response(status, #"{"errorCode":\#(code),"errorMessage":"\#(message)"}"#)
    }

    private static func response(_ status: HTTPResponse.Status, _ body: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// The fake server's application returned before it was listening.

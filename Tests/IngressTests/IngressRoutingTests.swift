import AppStoreModels
import AppStoreTestSupport
import Foundation
import Ingress
import KafkaClient
import NIOCore
import NIOHTTP1
import PipelineContract
import ServiceLifecycle
import Testing

@Suite("Ingress: fixtures to the raw topic, statuses, limits, the allow-list", .tags(.pipeline))
struct IngressRoutingTests {
    /// What a fixture case should produce: nil for 400 (not a JSON object), else the expected key when known.
    static func expectedKey(_ fixture: FixtureCase) -> String?? {
        if case .string(let key) = fixture.expect["originalTransactionId"] { return .some(key) }
        if fixture.expectedStatus == "OK", case .string(let uuid) = fixture.expect["notificationUUID"] {
            return .some(uuid)
        }
        let isObject = (try? JSONSerialization.jsonObject(with: Data(fixture.body.utf8))) is [String: Any]
        return isObject ? .some(nil) : nil
    }

    @Test("Every fixture body lands in the raw topic byte for byte, with its key and headers; non-objects get 400")
    func fixtures() async throws {
        let cases = Fixtures.v2Cases.map { (2, $0) } + Fixtures.v1Cases.map { (1, $0) }
        #expect(cases.count > 60)
        try await IngressHarness.with { ingress in
            var accepted: [String: (version: Int, fixture: FixtureCase)] = [:]
            for (version, fixture) in cases {
                let reply = try await ingress.post("/v\(version)/notifications/sandbox", body: fixture.body)
                let requestID = try #require(reply.requestID)
                switch Self.expectedKey(fixture) {
                case .none:
                    #expect(reply.status == .badRequest, "\(fixture.id)")
                    #expect(reply.body.contains("not a JSON object"))
                case .some:
                    #expect(reply.status == .ok, "\(fixture.id): \(reply.status) \(reply.body)")
                    accepted[requestID] = (version, fixture)
                }
            }
            let messages = try await ingress.consume(count: accepted.count)
            #expect(messages.count == accepted.count)
            for message in messages {
                let headers = try RawNotificationHeaders(fields: message.headerFields)
                let (version, fixture) = try #require(accepted[headers.requestID])
                let bytes = Array(message.value.readableBytesView)
                #expect(bytes == Array(fixture.body.utf8), "\(fixture.id)")
                #expect(headers.version == version)
                #expect(headers.environment == .sandbox)
                #expect(headers.app == IngressHarness.app.name)
                #expect(headers.source == .ingress)
                #expect(abs(headers.receivedAt.timeIntervalSinceNow) < 120)
                let key = message.key.map { String(buffer: $0) }
                if case .some(.some(let expected)) = Self.expectedKey(fixture) {
                    #expect(key == expected, "\(fixture.id)")
                } else {
                    #expect(key?.isEmpty == false, "\(fixture.id)")
                }
            }
        }
    }

    @Test("Bodies of one subscription land in one partition")
    func samePartition() async throws {
        struct Line: Decodable {
            var key: String
            var body: String
        }
        let lines = try String(contentsOf: Fixtures.directory.appendingPathComponent("scenario.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        try await IngressHarness.with { ingress in
            for line in lines {
                let reply = try await ingress.post("/v2/notifications/sandbox/notes", body: line.body)
                #expect(reply.status == .ok)
            }
            let messages = try await ingress.consume(count: lines.count)
            #expect(messages.count == lines.count)
            var partitions: [String: Set<Int32>] = [:]
            for message in messages {
                partitions[String(buffer: try #require(message.key)), default: []].insert(message.partition)
            }
            #expect(Set(partitions.keys) == Set(lines.map(\.key)))
            #expect(partitions.values.allSatisfy { $0.count == 1 })
            #expect(Set(partitions.values.flatMap { $0 }).count > 1, "several subscriptions should spread")
        }
    }

    @Test("Oversize, non-JSON, wrong method, unknown route, environment or app: documented statuses, nothing produced")
    func refusals() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        try await IngressHarness.with(configure: { $0.maximumBodySize = 64 * 1_024 }) { ingress in
            let oversize = "{\"signedPayload\": \"" + String(repeating: "a", count: 70_000) + "\"}"
            let cases: [(HTTPMethod, String, String?, HTTPResponseStatus)] = [
                (.POST, "/v2/notifications/sandbox", oversize, .payloadTooLarge),
                (.POST, "/v2/notifications/sandbox", "[1, 2, 3]", .badRequest),
                (.POST, "/v2/notifications/sandbox", "{\"truncated\": ", .badRequest),
                (.POST, "/v1/notifications/sandbox", "\"a string\"", .badRequest),
                (.GET, "/v2/notifications/sandbox", nil, .methodNotAllowed),
                (.PUT, "/v1/notifications/production/notes", valid, .methodNotAllowed),
                (.POST, "/v3/notifications/sandbox", valid, .notFound),
                (.POST, "/v2/notifications/staging", valid, .notFound),
                (.POST, "/v2/notifications/sandbox/other-app", valid, .notFound),
                (.GET, "/", nil, .notFound),
            ]
            for (method, path, body, status) in cases {
                let reply = try await ingress.send(method, path, body: body)
                #expect(reply.status == status, "\(method) \(path)")
            }
            let methodNotAllowed = try await ingress.send(.GET, "/v2/notifications/sandbox")
            #expect(methodNotAllowed.headers.first(name: "Allow") == "POST")
            // Chunked, without a Content-Length: the limit holds while reading.
            let chunked = try await ingress.post(
                "/v2/notifications/sandbox",
                bytes: Array(oversize.utf8),
                headers: [
                    ("Transfer-Encoding", "chunked")
                ]
            )
            #expect(chunked.status == .payloadTooLarge)
            let ok = try await ingress.post("/v2/notifications/production", body: valid)
            #expect(ok.status == .ok)
            let messages = try await ingress.consume(count: 1)
            #expect(messages.count == 1)
            #expect(messages.first?.headerFields[RawNotificationHeaders.Name.environment] == "Production")
        }
    }

    @Test(
        """
        The public port serves only the notification routes: /metrics and the probes are 404 there (counted as \
        unmatched), with or without the path token before them; the status port serves them and takes no notification
        """
    )
    func statusRoutesOffThePublicPort() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        let token = "s3cret-token-0123456789"
        try await IngressHarness.with(configure: { $0.pathToken = token }) { ingress in
            let statusPaths = ["/metrics", "/health/live", "/health/ready"]
            for path in statusPaths + statusPaths.map({ "/\(token)\($0)" }) {
                #expect(try await ingress.send(.GET, path).status == .notFound, "public GET \(path)")
                #expect(try await ingress.send(.POST, path, body: "{}").status == .notFound, "public POST \(path)")
            }
            for path in statusPaths {
                #expect(try await ingress.status(path).status == .ok, "status GET \(path)")
            }
            let notification = try await ingress.send(
                .POST,
                "/\(token)/v2/notifications/sandbox",
                bytes: Array(valid.utf8),
                headers: [],
                port: ingress.statusPort
            )
            #expect(notification.status == .notFound)
            #expect(try await ingress.consume(count: 0).isEmpty)
            let metrics = try await ingress.status("/metrics").body
            #expect(metrics.contains(#"asnp_ingress_requests_total{route="unmatched",status="404"} 12"#), "\(metrics)")
        }
    }

    @Test("The allow-list refuses other addresses with 403; X-Forwarded-For counts only from trusted proxies")
    func allowList() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        try await IngressHarness.with(configure: {
            $0.allowedSources = [IPNetwork("17.0.0.0/8")!]
            $0.trustedProxies = [IPNetwork("127.0.0.1/32")!]
        }) { ingress in
            let direct = try await ingress.post("/v2/notifications/sandbox", body: valid)
            #expect(direct.status == .forbidden, "a trusted proxy that forwards no address is the client itself")
        }
        try await IngressHarness.with(configure: {
            $0.allowedSources = [IPNetwork("17.0.0.0/8")!]
        }) { ingress in
            let direct = try await ingress.post("/v2/notifications/sandbox", body: valid)
            #expect(direct.status == .forbidden)
            let spoofed = try await ingress.post(
                "/v2/notifications/sandbox",
                body: valid,
                headers: [
                    ("X-Forwarded-For", "17.1.2.3")
                ]
            )
            #expect(spoofed.status == .forbidden, "an untrusted peer's X-Forwarded-For is ignored")
            let probing = try await ingress.post("/v2/notifications/sandbox/unknown-app", body: valid)
            #expect(probing.status == .forbidden, "outsiders learn nothing about the apps served")
            let reply6 = try await ingress.consume(count: 0)
            #expect(reply6.isEmpty)
        }
        try await IngressHarness.with(configure: {
            $0.allowedSources = [IPNetwork("17.0.0.0/8")!]
            $0.trustedProxies = [IPNetwork("127.0.0.0/8")!, IPNetwork("10.0.0.0/8")!]
        }) { ingress in
            let viaProxies = try await ingress.post(
                "/v2/notifications/sandbox",
                body: valid,
                headers: [
                    ("X-Forwarded-For", "6.6.6.6, 17.1.2.3, 10.0.0.7")
                ]
            )
            #expect(viaProxies.status == .ok)
            let outsider = try await ingress.post(
                "/v2/notifications/sandbox",
                body: valid,
                headers: [
                    ("X-Forwarded-For", "17.1.2.3, 6.6.6.6")
                ]
            )
            #expect(outsider.status == .forbidden)
            let reply7 = try await ingress.consume(count: 1)
            #expect(reply7.count == 1)
        }
    }

    @Test("With a path token, only paths that start with it are served")
    func pathToken() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        let token = "s3cret-token-0123456789"
        try await IngressHarness.with(configure: { $0.pathToken = token }) { ingress in
            let reply1 = try await ingress.post("/v2/notifications/sandbox", body: valid)
            #expect(reply1.status == .notFound)
            let reply2 = try await ingress.post("/wrong-token-0123456789/v2/notifications/sandbox", body: valid)
            #expect(reply2.status == .notFound)
            let reply3 = try await ingress.post("/\(token)/v2/notifications/sandbox", body: valid)
            #expect(reply3.status == .ok)
            let reply4 = try await ingress.post("/\(token)/v2/notifications/sandbox/notes", body: valid)
            #expect(reply4.status == .ok)
            let reply8 = try await ingress.consume(count: 2)
            #expect(reply8.count == 2)
        }
    }

    @Test("Several apps: the path must name one, and the header carries it")
    func severalApps() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        try await IngressHarness.with(configure: {
            $0.apps.append(PipelineApp(name: "games", bundleID: "com.example.games"))
        }) { ingress in
            let unnamed = try await ingress.post("/v2/notifications/sandbox", body: valid)
            #expect(unnamed.status == .notFound)
            #expect(unnamed.body.contains("add the app's name"))
            let reply5 = try await ingress.post("/v2/notifications/sandbox/games", body: valid)
            #expect(reply5.status == .ok)
            let messages = try await ingress.consume(count: 1)
            #expect(messages.map { $0.headerFields[RawNotificationHeaders.Name.app] } == ["games"])
        }
    }

    @Test(
        """
        A notification the configuration cannot verify (Production V2 without an app Apple id, V1 without a shared \
        secret) is refused with 503 and the reason, so Apple retries it, and counted; nothing is produced
        """
    )
    func unverifiable() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        let validV1 = try #require(Fixtures.v1Cases.first { $0.expectedStatus == "OK" }).body
        try await IngressHarness.with(configure: {
            $0.apps.append(PipelineApp(name: "games", bundleID: "com.example.games"))
        }) { ingress in
            let production = try await ingress.post("/v2/notifications/production/games", body: valid)
            #expect(production.status == .serviceUnavailable)
            #expect(production.body.contains("appAppleId"), "\(production.body)")
            let v1 = try await ingress.post("/v1/notifications/sandbox/games", body: validV1)
            #expect(v1.status == .serviceUnavailable)
            #expect(v1.body.contains("shared secret"), "\(v1.body)")
            // What it can verify is taken as usual: V2 Sandbox needs no app Apple id.
            let sandbox = try await ingress.post("/v2/notifications/sandbox/games", body: valid)
            #expect(sandbox.status == .ok)
            let messages = try await ingress.consume(count: 1)
            #expect(messages.count == 1)
            #expect(messages.first?.headerFields[RawNotificationHeaders.Name.environment] == "Sandbox")
            let metrics = try await ingress.status("/metrics")
            #expect(
                metrics.body.contains(
                    #"asnp_ingress_unverifiable_total{app="games",environment="Production",version="2"} 1"#
                ),
                "\(metrics.body)"
            )
            #expect(
                metrics.body.contains(
                    #"asnp_ingress_unverifiable_total{app="games",environment="Sandbox",version="1"} 1"#
                )
            )
        }
    }
}

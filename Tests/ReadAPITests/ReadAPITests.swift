import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import Foundation
import Logging
import NotificationStore
import PipelineTracing
import ReadAPI
import Synchronization
import Testing

/// The read API against a real PostgreSQL filled by the store's writer, over HTTP on loopback; every answer of every
/// test is validated against Docs/contract/openapi.yaml at its end (``APITestRig/validateExchanges()``).
@Suite("Read API: access, customers and notifications for app backends, per key and scope", .tags(.process))
struct ReadAPITests {
    typealias Rig = APITestRig
    static let day = Rig.day
    static let notes = [(bundleId: Rig.bundleId, environments: ["Sandbox"])]

    @Test("openapi.yaml is a valid OpenAPI 3.1 document by openapi-spec-validator, every $ref resolving")
    func contractIsValid() async throws {
        let (status, report) = try await Rig.validator(["spec"])
        #expect(status == 0, "\(report)")
        #expect(report.contains("3 operations"))
    }

    @Test("a subscription: access now judged against the clock, the state topic's row beside it, an entity tag")
    func subscriptionAccess() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        try await Rig.run(keys: [key]) { rig in
            let now = Rig.nowMilliseconds
            let expires = now + 20 * Self.day
            try await rig.store([
                Rig.subscribed("1000000001", at: now - Self.day, expires: expires),
                Rig.subscribed("1000000002", at: now - 40 * Self.day, expires: now - 10 * Self.day),
                Rig.event(
                    .expired,
                    .voluntary,
                    key: "1000000002",
                    transaction: "1000000002",
                    at: now - 10 * Self.day,
                    expires: now - 10 * Self.day
                ) {
                    $0.status = .expired
                    $0.autoRenewStatus = .off
                },
            ])
            let active = try await rig.get("/v1/subscriptions/1000000001", key: key)
            #expect(active.status == 200)
            #expect(active.header("content-type") == "application/json")
            #expect(active.json["has_access"] as? Bool == true)
            #expect(active.json["entitled"] as? Bool == true)
            #expect(active.json["entitled_until"] as? String == RFC3339(expires))
            #expect(
                active.json["bundle_id"] as? String == Rig.bundleId
                    && active.json["environment"] as? String == "Sandbox"
            )
            let state = try #require(active.json["state"] as? [String: Any])
            #expect(state["original_transaction_id"] as? String == "1000000001")
            #expect(state["last_notification_type"] as? String == "SUBSCRIBED")
            #expect(active.header("etag")?.hasPrefix("\"") == true)
            #expect(active.header("date") != nil, "the moment access was judged")

            let expired = try await rig.get("/v1/subscriptions/1000000002", key: key)
            #expect(expired.status == 200)
            #expect(expired.json["has_access"] as? Bool == false)
            #expect((expired.json["state"] as? [String: Any])?["status"] as? Int == 2)

            // Past its expiry, the same row no longer gives access, and the answer (and its tag) changed.
            rig.now.withLock { $0 = Date(timeIntervalSince1970: Double(expires) / 1000 + 1) }
            let later = try await rig.get("/v1/subscriptions/1000000001", key: key)
            #expect(later.json["has_access"] as? Bool == false)
            #expect(later.json["entitled"] as? Bool == true)
            #expect(later.header("etag") != active.header("etag"))
        }
    }

    @Test("a customer: every purchase by their token in either case, and access per subscription group")
    func customer() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        try await Rig.run(keys: [key]) { rig in
            let now = Rig.nowMilliseconds
            let token = UUID()
            let tokenText = token.uuidString.lowercased()
            try await rig.store([
                Rig.event(
                    .subscribed,
                    .initialBuy,
                    key: "2000000001",
                    transaction: "2000000001",
                    at: now - Self.day,
                    expires: now + 29 * Self.day
                ) {
                    $0.appAccountToken = tokenText
                },
                Rig.event(
                    .expired,
                    .voluntary,
                    key: "2000000002",
                    transaction: "2000000002",
                    at: now - 5 * Self.day,
                    expires: now - 5 * Self.day
                ) {
                    $0.appAccountToken = tokenText
                    $0.status = .expired
                },
                Rig.event(
                    .oneTimeCharge,
                    key: "2000000003",
                    transaction: "2000000003",
                    at: now - 3 * Self.day,
                    expires: now
                ) {
                    $0.appAccountToken = tokenText
                    $0.productType = .nonConsumable
                    $0.productId = "com.example.notes.lifetime"
                },
                // Another customer's.
                Rig.event(
                    .subscribed,
                    .initialBuy,
                    key: "2000000004",
                    transaction: "2000000004",
                    at: now,
                    expires: now + 30 * Self.day
                ) {
                    $0.appAccountToken = UUID().uuidString.lowercased()
                },
            ])
            let answer = try await rig.get("/v1/customers/\(token.uuidString.uppercased())", key: key)
            #expect(answer.status == 200)
            #expect(answer.json["app_account_token"] as? String == tokenText)
            #expect(answer.json["has_access"] as? Bool == true)
            #expect(answer.json["purchases_total"] as? Int == 3)
            let purchases = try #require(answer.json["purchases"] as? [[String: Any]])
            #expect(
                purchases.map { $0["original_transaction_id"] as? String } == [
                    "2000000001", "2000000002", "2000000003",
                ]
            )
            #expect(purchases.map { $0["has_access"] as? Bool } == [true, false, true])
            #expect(purchases[2]["entitled_until"] is NSNull, "a non-consumable gives access with no end")
            let groups = try #require(answer.json["subscription_groups"] as? [[String: Any]])
            #expect(groups.count == 1)
            #expect(groups.first?["has_access"] as? Bool == true)
            #expect(groups.first?["entitled_original_transaction_ids"] as? [String] == ["2000000001"])
            #expect(groups.first?["original_transaction_ids"] as? [String] == ["2000000001", "2000000002"])
            #expect(groups.first?["entitled_until"] as? String == RFC3339(now + 29 * Self.day))

            let unknown = try await rig.get("/v1/customers/\(UUID().uuidString)", key: key)
            #expect(unknown.status == 404)
            #expect(unknown.json["code"] as? String == "not_found")
        }
    }

    @Test("notifications page by page to the end and back while new ones, and one Apple delivered late, are stored")
    func notificationPages() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        try await Rig.run(keys: [key]) { rig in
            let start = Rig.nowMilliseconds - 100 * Self.day
            func event(_ index: Int) -> SubscriptionEvent {
                Rig.event(
                    index == 1 ? .subscribed : .didRenew,
                    index == 1 ? .initialBuy : nil,
                    key: "3000000001",
                    transaction: "30000000\(10 + index)",
                    at: start + Int64(index) * Self.day,
                    expires: start + Int64(index + 30) * Self.day
                )
            }
            let events = (0...8).map(event)
            func uuids(_ exchange: Rig.Exchange) -> [String] {
                (exchange.json["notifications"] as? [[String: Any]] ?? []).compactMap {
                    $0["notification_uuid"] as? String
                }
            }
            func cursor(_ exchange: Rig.Exchange, _ name: String) -> String? { exchange.json[name] as? String }
            func page(_ cursor: String?) async throws -> Rig.Exchange {
                let query = "limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                let exchange = try await rig.get("/v1/subscriptions/3000000001/notifications?\(query)", key: key)
                #expect(exchange.status == 200)
                return exchange
            }
            let expected = events.map(\.notificationUUID)
            try await rig.store(Array(events[1...7]))

            let first = try await page(nil)
            #expect(uuids(first) == [expected[7], expected[6], expected[5]])
            #expect(cursor(first, "previous_cursor") == nil)
            let item = try #require((first.json["notifications"] as? [[String: Any]])?.first)
            #expect(item["body_kept"] as? Bool == true)
            #expect(
                ((item["decoded"] as? [String: Any])?["payload"] as? [String: Any])?["notificationUUID"] as? String
                    == expected[7]
            )

            // Meanwhile a newer notification arrives, and an older one Apple delivered late.
            try await rig.store([events[8], events[0]])
            let second = try await page(cursor(first, "next_cursor"))
            #expect(uuids(second) == [expected[4], expected[3], expected[2]])
            let third = try await page(cursor(second, "next_cursor"))
            #expect(uuids(third) == [expected[1], expected[0]], "the late one is where its date puts it")
            #expect(cursor(third, "next_cursor") == nil, "the end")

            let back = try await page(cursor(third, "previous_cursor"))
            #expect(uuids(back) == uuids(second))
            let backFirst = try await page(cursor(back, "previous_cursor"))
            #expect(uuids(backFirst) == uuids(first))
            let newest = try await page(cursor(backFirst, "previous_cursor"))
            #expect(uuids(newest) == [expected[8]], "the newer one is before the first page now")
            #expect(cursor(newest, "previous_cursor") == nil, "the start")
            #expect(try await page(nil).json["next_cursor"] is String)

            let garbage = try await rig.get("/v1/subscriptions/3000000001/notifications?cursor=not-a-cursor", key: key)
            #expect(garbage.status == 400 && garbage.json["code"] as? String == "invalid_parameter")
            let tooMany = try await rig.get("/v1/subscriptions/3000000001/notifications?limit=201", key: key)
            #expect(tooMany.status == 400)
            let none = try await rig.get("/v1/subscriptions/3999999999/notifications", key: key)
            #expect(none.status == 404)
        }
    }

    @Test("no key, an unknown key and a malformed header get the same 401 with WWW-Authenticate")
    func unauthenticated() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        try await Rig.run(keys: [key]) { rig in
            let missing = try await rig.get("/v1/subscriptions/1", key: nil)
            let wrong = try await rig.get("/v1/subscriptions/1", key: Rig.Key(id: "stranger", scopes: Self.notes))
            let malformed = try await rig.get("/v1/subscriptions/1", key: nil, authorization: "Basic \(key.key)")
            for answer in [missing, wrong, malformed] {
                #expect(answer.status == 401)
                #expect(answer.header("www-authenticate") == "Bearer realm=\"asnp\"")
                #expect(answer.header("content-type") == "application/problem+json")
                #expect(answer.body == missing.body)
            }
            #expect(missing.json["code"] as? String == "unauthenticated")
        }
    }

    @Test("a key of another app, or asking for a scope the key lacks, gets what an unknown id gets, byte for byte")
    func noExistenceLeak() async throws {
        let notes = Rig.Key(id: "notes", scopes: Self.notes)
        let other = Rig.Key(id: "other", scopes: [(bundleId: Rig.otherBundleId, environments: ["Sandbox"])])
        try await Rig.run(keys: [notes, other]) { rig in
            let now = Rig.nowMilliseconds
            try await rig.store([
                Rig.subscribed("4000000001", at: now)
            ])
            #expect(try await rig.get("/v1/subscriptions/4000000001", key: notes).status == 200)
            let unknown = try await rig.get("/v1/subscriptions/4999999999", key: other)
            let answers = [
                try await rig.get("/v1/subscriptions/4000000001", key: other),
                try await rig.get(
                    "/v1/subscriptions/4000000001?bundleId=\(Rig.otherBundleId)&environment=Sandbox",
                    key: notes
                ),
                try await rig.get("/v1/subscriptions/4000000001?environment=Production", key: notes),
            ]
            func comparable(_ exchange: Rig.Exchange) -> [String] {
                exchange.headers.filter { $0.0.lowercased() != "date" }.map { "\($0.0.lowercased()): \($0.1)" }.sorted()
            }
            #expect(unknown.status == 404)
            for answer in answers {
                #expect(answer.status == unknown.status)
                #expect(answer.body == unknown.body)
                #expect(comparable(answer) == comparable(unknown))
            }
            let notifications = try await rig.get("/v1/subscriptions/4000000001/notifications", key: other)
            #expect(notifications.status == 404)
        }
    }

    @Test("a key over its rate gets 429 with Retry-After; another key is not held back")
    func rateLimited() async throws {
        // One request a minute after a burst of two: the third is refused however slow the machine.
        let slow = Rig.Key(id: "slow", scopes: Self.notes, requestsPerSecond: 1.0 / 60, burst: 2)
        let other = Rig.Key(id: "other", scopes: Self.notes)
        try await Rig.run(keys: [slow, other]) { rig in
            #expect(try await rig.get("/v1/subscriptions/5", key: slow).status == 404)
            #expect(try await rig.get("/v1/subscriptions/5", key: slow).status == 404)
            let refused = try await rig.get("/v1/subscriptions/5", key: slow)
            #expect(refused.status == 429)
            #expect(refused.json["code"] as? String == "rate_limited")
            let retryAfter = try #require(refused.header("retry-after").flatMap(Int.init))
            #expect((1...60).contains(retryAfter))
            #expect(try await rig.get("/v1/subscriptions/5", key: other).status == 404)
            let metrics = try await rig.status("/metrics")
            #expect(metrics.body.contains("asnp_api_requests_total{"))
            #expect(
                metrics.body.split(separator: "\n").contains {
                    $0.contains("status=\"429\"") && $0.contains("key=\"slow\"")
                }
            )
        }
    }

    @Test("If-None-Match with the answer's tag gets 304 until the subscription changes")
    func conditionalRequests() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        try await Rig.run(keys: [key]) { rig in
            let now = Rig.nowMilliseconds
            try await rig.store([
                Rig.subscribed("6000000001", at: now - Self.day, expires: now + 29 * Self.day)
            ])
            let first = try await rig.get("/v1/subscriptions/6000000001", key: key)
            let tag = try #require(first.header("etag"))
            let unchanged = try await rig.get(
                "/v1/subscriptions/6000000001",
                key: key,
                headers: [("If-None-Match", tag)]
            )
            #expect(unchanged.status == 304)
            #expect(unchanged.body.isEmpty)
            #expect(unchanged.header("etag") == tag)
            let weak = try await rig.get(
                "/v1/subscriptions/6000000001",
                key: key,
                headers: [("If-None-Match", "\"x\", W/\(tag)")]
            )
            #expect(weak.status == 304, "If-None-Match compares weakly")
            let page = try await rig.get("/v1/subscriptions/6000000001/notifications", key: key)
            let pageTag = try #require(page.header("etag"))
            #expect(
                try await rig.get(
                    "/v1/subscriptions/6000000001/notifications",
                    key: key,
                    headers: [("If-None-Match", pageTag)]
                ).status == 304
            )

            try await rig.store([
                Rig.event(
                    .didRenew,
                    key: "6000000001",
                    transaction: "6000000002",
                    at: now,
                    expires: now + 59 * Self.day
                )
            ])
            let changed = try await rig.get("/v1/subscriptions/6000000001", key: key, headers: [("If-None-Match", tag)])
            #expect(changed.status == 200)
            #expect(changed.header("etag") != tag)
            #expect(changed.json["entitled_until"] as? String == RFC3339(now + 59 * Self.day))
        }
    }

    @Test("a key reading several scopes names one; a single-scope key need not; bad parameters and routes are problems")
    func scopesAndBadRequests() async throws {
        let both = Rig.Key(id: "both", scopes: [(bundleId: Rig.bundleId, environments: ["Sandbox", "Production"])])
        try await Rig.run(keys: [both]) { rig in
            let now = Rig.nowMilliseconds
            try await rig.store([
                Rig.subscribed("7000000001", at: now)
            ])
            let ambiguous = try await rig.get("/v1/subscriptions/7000000001", key: both)
            #expect(ambiguous.status == 400 && ambiguous.json["code"] as? String == "scope_required")
            #expect(try await rig.get("/v1/subscriptions/7000000001?environment=Sandbox", key: both).status == 200)
            #expect(try await rig.get("/v1/subscriptions/7000000001?environment=Production", key: both).status == 404)
            let badEnvironment = try await rig.get("/v1/subscriptions/7000000001?environment=Staging", key: both)
            #expect(badEnvironment.status == 400 && badEnvironment.json["code"] as? String == "invalid_parameter")
            let badToken = try await rig.get("/v1/customers/not-a-uuid?environment=Sandbox", key: both)
            #expect(badToken.status == 400)
            let route = try await rig.get("/v1/nothing", key: both)
            #expect(route.status == 404 && route.header("content-type") == "application/problem+json")
        }
    }

    @Test("a rotated keys file takes effect when read again; an unusable one keeps the keys in use")
    func keyRotation() async throws {
        let old = Rig.Key(id: "billing-1", scopes: Self.notes)
        let new = Rig.Key(id: "billing-2", scopes: Self.notes)
        try await Rig.run(keys: [old]) { rig in
            #expect(try await rig.get("/v1/subscriptions/8", key: old).status == 404)
            #expect(try await rig.get("/v1/subscriptions/8", key: new).status == 401)
            try Rig.write([old, new], to: rig.keysFile)
            rig.api.keys.reload()
            #expect(try await rig.get("/v1/subscriptions/8", key: new).status == 404, "both during the rotation")
            #expect(try await rig.get("/v1/subscriptions/8", key: old).status == 404)
            try Rig.write([new], to: rig.keysFile)
            rig.api.keys.reload()
            #expect(try await rig.get("/v1/subscriptions/8", key: old).status == 401, "the old key is gone")
            try Data("{\"keys\": [{\"id\": \"broken\"}]}".utf8).write(to: URL(fileURLWithPath: rig.keysFile))
            rig.api.keys.reload()
            #expect(try await rig.get("/v1/subscriptions/8", key: new).status == 404, "still the keys read before")
            let metrics = try await rig.status("/metrics")
            #expect(metrics.body.contains("asnp_api_keys_reload_failures_total 1"))
        }
    }

    @Test(
        """
        with tracing on, a request carrying a traceparent is a server span of the caller's trace, named by its route \
        (no id recorded), with its status and key; a 404 is no error
        """
    )
    func traced() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        let collector = OTLPTestCollector()
        let callerTrace = "0af7651916cd43dd8448eb211c80319c"
        let callerSpan = "b7ad6b7169203331"
        try await collector.serve { endpoint in
            var configuration = TracingConfiguration(serviceName: "asnp-api")
            configuration.isEnabled = true
            configuration.endpoint = endpoint
            configuration.otlpProtocol = .httpJSON
            configuration.samplingRatio = 1
            let tracing = try TracingBackend.make(configuration, logger: Logger(label: "test.api-tracing"))
            try await Rig.run(keys: [key], tracing: tracing) { rig in
                let now = Rig.nowMilliseconds
                try await rig.store([
                    Rig.subscribed("9200000001", at: now)
                ])
                let found = try await rig.get(
                    "/v1/subscriptions/9200000001",
                    key: key,
                    headers: [("traceparent", "00-\(callerTrace)-\(callerSpan)-01")]
                )
                #expect(found.status == 200)
                #expect(try await rig.get("/v1/subscriptions/9299999999", key: key).status == 404)
            }
        }
        #expect(collector.unreadableExports.isEmpty, "\(collector.unreadableExports)")
        let spans = collector.spans.filter { $0.serviceName == "asnp-api" }
        let traced = try #require(spans.first { $0.traceID == callerTrace }, "\(collector.spans)")
        #expect(traced.parentSpanID == callerSpan && traced.kind == 2)
        #expect(traced.name == "GET /v1/subscriptions/{originalTransactionId}")
        #expect(traced.attributes["http.route"] == "/v1/subscriptions/{originalTransactionId}")
        #expect(
            traced.attributes["http.response.status_code"] == "200" && traced.attributes["asnp.api.key"] == "billing"
        )
        #expect(!traced.attributes.values.contains { $0.contains("9200000001") }, "no subscription id recorded")
        let notFound = try #require(spans.first { $0.traceID != callerTrace })
        #expect(notFound.attributes["http.response.status_code"] == "404" && notFound.statusCode != 2)
    }

    @Test("before the schema is migrated the API is not ready: probes say why, requests get 503 with Retry-After")
    func notReady() async throws {
        let key = Rig.Key(id: "billing", scopes: Self.notes)
        try await Rig.run(keys: [key], migrate: false) { rig in
            let ready = try await rig.status("/health/ready")
            #expect(ready.status == 503)
            let answer = try await rig.get("/v1/subscriptions/9", key: key)
            #expect(answer.status == 503)
            #expect(answer.json["code"] as? String == "not_ready")
            #expect(answer.header("retry-after") == "5")
            try await rig.store.migrate()
            let becameReady = await eventually { (try? await rig.status("/health/ready").status) == 200 }
            #expect(becameReady, "ready once migrated (checked every 2 s)")
            #expect(try await rig.get("/v1/subscriptions/9", key: key).status == 404)
        }
    }

    /// Milliseconds since 1970 as the API writes instants: RFC 3339 in UTC, with the milliseconds exact.
    private func RFC3339(_ milliseconds: Int64) -> String {
        let seconds = Date(timeIntervalSince1970: Double(milliseconds / 1000)).formatted(.iso8601)
        return seconds.dropLast() + String(format: ".%03dZ", Int(milliseconds % 1000))
    }
}

import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

/// Every labelled fixture gets exactly the verdict Apple's own library gives it.
@Suite("Fixture cases agree with Apple's app-store-server-library", .tags(.fast))
struct FixtureCaseTests {
    @Test("the fixtures are present", .tags(.fixtures))
    func fixturesPresent() {
        #expect(Fixtures.v2Cases.count >= 50, "expected the V2 cases at \(Fixtures.directory.path)")
        #expect(Fixtures.v1Cases.count >= 10, "expected the V1 cases at \(Fixtures.directory.path)")
    }

    @Test("V2 case", .tags(.fixtures), arguments: Fixtures.v2Cases)
    func v2Case(_ fixture: FixtureCase) async throws {
        let result = try await TestVerifiers.fixtures().verify(body: Array(fixture.body.utf8))
        #expect(result.status == fixture.expectedStatus, "\(result.error?.debugDescription ?? "")")
        if fixture.kind == "valid" {
            let notification = try #require(result.v2)
            let facts = NotificationFacts(notification)
            let actual: [String: JSONValue] = [
                "notificationType": .init(facts.notificationType),
                "subtype": .init(facts.subtype),
                "notificationUUID": .init(facts.notificationUUID),
                "signedDate": .init(facts.signedDate),
                "environment": .init(facts.environment),
                "originalTransactionId": .init(facts.originalTransactionId),
                "transactionId": .init(facts.transactionId),
                "productId": .init(facts.productId),
                "expiresDate": .init(facts.expiresDate),
                "revocationDate": .init(facts.revocationDate),
                "autoRenewStatus": .init(facts.autoRenewStatus.map(Int64.init)),
                "requestIdentifier": .init(facts.requestIdentifier),
                "succeededCount": .init(facts.succeededCount),
                "externalPurchaseId": .init(facts.externalPurchaseId),
            ]
            for (key, expected) in fixture.expect where key != "status" {
                #expect(actual[key] == expected, "\(key)")
            }
        } else {
            #expect(result.v2 == nil, "a \(fixture.kind) case must never verify")
        }
    }

    @Test("V1 case", .tags(.fixtures), arguments: Fixtures.v1Cases)
    func v1Case(_ fixture: FixtureCase) async throws {
        let result = try await TestVerifiers.fixtures().verify(body: Array(fixture.body.utf8))
        #expect(result.status == fixture.expectedStatus, "\(result.error?.debugDescription ?? "")")
        guard fixture.kind == "valid" else { return }
        guard case .verified(.v1(let notification)) = result else {
            Issue.record("expected a verified V1 notification")
            return
        }
        let facts = NotificationFacts(notification)
        #expect(JSONValue(facts.notificationType) == fixture.expect["notificationType"])
        #expect(JSONValue(facts.originalTransactionId) == fixture.expect["originalTransactionId"])
        #expect(JSONValue(facts.environment) == fixture.expect["environment"])
    }

    @Test("no valid case verifies against an unrelated root", .tags(.fixtures))
    func unrelatedRootRejectsAll() async throws {
        let verifier = try TestVerifiers.fixtures(roots: ["test-other-root.der"])
        let valid = Fixtures.v2Cases.filter { $0.kind == "valid" }
        #expect(!valid.isEmpty)
        for fixture in valid {
            let result = await verifier.verify(body: Array(fixture.body.utf8))
            #expect(result.status == "VERIFICATION_FAILURE", "\(fixture.id)")
        }
    }

    @Test("the scenario's bodies all verify, duplicates included", .tags(.fixtures))
    func scenarioVerifies() async throws {
        struct Line: Decodable {
            var uuid: String
            var body: String
        }
        let verifier = try TestVerifiers.fixtures()
        let lines = try Fixtures.data("scenario.jsonl").split(separator: UInt8(ascii: "\n")).map {
            try JSONDecoder().decode(Line.self, from: Data($0))
        }
        #expect(lines.count >= 30)
        for line in lines {
            let result = await verifier.verify(body: Array(line.body.utf8))
            #expect(result.v2?.payload.notificationUUID == line.uuid, "\(result.status)")
        }
        // One chain signs them all: verified once, then served from the cache.
        #expect(verifier.signedDataVerifier.chainVerifier.cacheStatistics.entries == 1)
    }
}

extension Tag {
    @Tag static var fixtures: Self
}

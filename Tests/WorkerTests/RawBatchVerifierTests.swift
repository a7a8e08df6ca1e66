import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import KafkaClient
import NIOCore
import NotificationStore
import PipelineContract
import SwiftASN1
import Testing
import X509

@testable import Worker

@Suite("Raw messages to a verified batch: per-app verifiers, verdicts in offset order", .tags(.fast))
struct RawBatchVerifierTests {
    static let app = PipelineApp(
        name: "notes",
        bundleID: Fixtures.bundleId,
        appAppleID: Fixtures.appAppleId,
        sharedSecrets: [Fixtures.sharedSecret]
    )

    static func verifier(apps: [PipelineApp] = [app], parallelism: Int = 4) throws -> RawBatchVerifier {
        let root = try Certificate(derEncoded: Array(Fixtures.data("test-root.der")))
        let directory = VerifierDirectory(
            apps: apps,
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: [root]))
        )
        return RawBatchVerifier(directory: directory, parallelism: parallelism)
    }

    static func message(
        _ body: String,
        offset: Int64,
        version: Int = 2,
        environment: AppStoreEnvironment = .sandbox,
        app: String = "notes",
        headers: [KafkaHeader]? = nil
    ) -> KafkaMessage {
        let fields = RawNotificationHeaders(
            version: version,
            environment: environment,
            app: app,
            receivedAt: Date(timeIntervalSince1970: 1_790_000_000),
            requestID: "request-\(offset)",
            source: .ingress
        ).kafkaHeaders
        return KafkaMessage(
            topic: PipelineTopics.raw,
            partition: 3,
            offset: offset,
            key: ByteBuffer(string: "key-\(offset)"),
            value: ByteBuffer(string: body),
            headers: headers ?? fields,
            timestamp: nil
        )
    }

    @Test("Every fixture gets Apple's verdict, in offset order, with its Kafka coordinates and receive time")
    func fixtures() async throws {
        let cases = Fixtures.v2Cases.map { (2, $0) } + Fixtures.v1Cases.map { (1, $0) }
        let messages = cases.enumerated().map { index, item in
            Self.message(item.1.body, offset: Int64(100 + index), version: item.0)
        }
        let batch = try await Self.verifier().batch(for: messages)
        #expect(batch.entries.count == cases.count)
        for (entry, (_, fixture)) in zip(batch.entries, cases) {
            switch entry.verdict {
            case .verified(let notification):
                #expect(fixture.expectedStatus == "OK", "\(fixture.id)")
                if case .string(let uuid) = fixture.expect["notificationUUID"], case .v2(let decoded) = notification {
                    #expect(decoded.payload.notificationUUID?.lowercased() == uuid.lowercased(), "\(fixture.id)")
                }
            case .rejected(let status, let reason):
                let acceptable =
                    [fixture.expectedStatus]
                    + (fixture.expectedStatus == "VERIFICATION_FAILURE" ? ["MALFORMED_BODY"] : [])
                #expect(acceptable.contains(status), "\(fixture.id): \(status) \(reason)")
            }
        }
        #expect(batch.entries.map(\.raw.source.offset) == messages.map(\.offset))
        #expect(batch.entries.allSatisfy { $0.raw.receivedAt == Date(timeIntervalSince1970: 1_790_000_000) })
        #expect(batch.entries.first?.raw.key == "key-100")
        #expect(batch.entries.first?.raw.headers[RawNotificationHeaders.Name.requestID] == "request-100")
    }

    @Test("Batches verified at once share the verifier's places: no more bodies verify at once than its parallelism")
    func sharedParallelism() async throws {
        let verifier = try Self.verifier(parallelism: 1)
        let bodies = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }.map(\.body)
        try #require(!bodies.isEmpty)
        // Four batches at once, as the worker verifies up to `maximumConcurrentBatches` of them.
        let batches = try await withThrowingTaskGroup(of: (Int, NotificationBatch).self) { group in
            for batch in 0..<4 {
                let messages = (0..<8).map { index in
                    Self.message(bodies[index % bodies.count], offset: Int64(batch * 100 + index))
                }
                group.addTask { (batch, try await verifier.batch(for: messages)) }
            }
            return try await group.reduce(into: [Int: NotificationBatch]()) { $0[$1.0] = $1.1 }
        }
        for batch in 0..<4 {
            let entries = try #require(batches[batch]?.entries)
            #expect(entries.map(\.raw.source.offset) == (0..<8).map { Int64(batch * 100 + $0) })
            #expect(entries.allSatisfy { if case .verified = $0.verdict { true } else { false } })
        }
        #expect(verifier.slots.mostHeld == 1)
        #expect(verifier.slots.waitingCount == 0)
    }

    @Test("The route's environment and app decide the policy; unattributable messages are rejected, not dropped")
    func routing() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }).body
        let validV1 = try #require(Fixtures.v1Cases.first { $0.expectedStatus == "OK" }).body
        let productionV1 = validV1.replacingOccurrences(
            of: #"{"environment": "Sandbox""#,
            with: #"{"environment": "PROD""#
        )
        #expect(productionV1 != validV1)
        // No app Apple id: V2 cannot be verified in Production, V1 (which carries none) can.
        let sandboxOnly = PipelineApp(
            name: "games",
            bundleID: Fixtures.bundleId,
            sharedSecrets: [Fixtures.sharedSecret]
        )
        let messages = [
            Self.message(valid, offset: 1),
            Self.message(valid, offset: 2, environment: .production),
            Self.message(valid, offset: 3, app: "unknown"),
            Self.message(valid, offset: 4, environment: .production, app: "games"),
            Self.message(valid, offset: 5, headers: []),
            Self.message(
                valid,
                offset: 6,
                headers: [KafkaHeader(key: RawNotificationHeaders.Name.version, string: "7")]
            ),
            Self.message(productionV1, offset: 7, version: 1, environment: .production, app: "games"),
            Self.message(validV1, offset: 8, version: 1, environment: .production, app: "games"),
            Self.message(validV1, offset: 9, version: 1, app: "tools"),
        ]
        let withoutSecrets = PipelineApp(name: "tools", bundleID: Fixtures.bundleId, appAppleID: Fixtures.appAppleId)
        let batch = try await Self.verifier(apps: [Self.app, sandboxOnly, withoutSecrets]).batch(for: messages)
        let statuses = batch.entries.map { entry -> String in
            switch entry.verdict {
            case .verified: "OK"
            case .rejected(let status, _): status
            }
        }
        #expect(
            statuses == [
                "OK", "INVALID_ENVIRONMENT", "UNKNOWN_APP", "APP_NOT_CONFIGURED", "INVALID_HEADERS", "INVALID_HEADERS",
                "OK", "INVALID_ENVIRONMENT", "APP_NOT_CONFIGURED",
            ]
        )
        if case .rejected(_, let reason) = batch.entries[4].verdict {
            #expect(reason.contains("asnp-version"))
        }
    }
}

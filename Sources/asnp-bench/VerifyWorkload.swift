import AppStoreModels
import AppStoreSigning
import AppStoreVerification
import Foundation

/// Realistic subscription notifications for benchmarks, signed by fresh test PKIs shaped like Apple's.
struct VerifyWorkload {
    static let bundleId = "com.example.bench"

    /// The raw HTTP bodies.
    let bodies: [Data]
    /// The roots that sign them, as DER.
    let rootDERs: [[UInt8]]
    private let pkis: [TestPKI]

    init(count: Int, chains: Int) throws {
        pkis = try (0..<chains).map { _ in try TestPKI() }
        rootDERs = try pkis.map { try $0.rootDER() }
        let signers = try pkis.map { NotificationSigner(signer: try JWSSigner(pki: $0)) }
        let events = SubscriptionEvent.samples(count: count, bundleId: Self.bundleId)
        bodies = try events.enumerated().map { index, event in
            Data(try signers[index % signers.count].body(for: event).utf8)
        }
    }

    /// A verifier trusting the workload's roots.
    func verifier(cacheCapacity: Int) throws -> NotificationVerifier {
        let roots = pkis.map(\.root)
        return NotificationVerifier(
            configuration: .init(policy: try VerificationPolicy(bundleId: Self.bundleId, environment: .sandbox)),
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: roots, cacheCapacity: cacheCapacity))
        )
    }

    /// The bodies as `{"id": n, "body": "..."}` lines, the input format of `asnp verify --jsonl`.
    func jsonLines() throws -> Data {
        try Self.jsonLines(bodies.map { String(decoding: $0, as: UTF8.self) })
    }

    /// One input line of `asnp verify --jsonl`.
    private struct Line: Encodable {
        var id: Int
        var body: String
    }

    /// `bodies` as `{"id": n, "body": "..."}` lines, numbered from 0.
    static func jsonLines(_ bodies: some Sequence<String>) throws -> Data {
        var data = Data()
        let encoder = JSONEncoder()
        for (index, body) in bodies.enumerated() {
            data.append(try encoder.encode(Line(id: index, body: body)))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}

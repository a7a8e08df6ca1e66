import AppStoreModels
import AppStoreSigning
import AppStoreVerification
import Foundation

/// Realistic subscription notifications for benchmarks, signed by fresh test PKIs shaped like Apple's.
package struct VerifyWorkload {
    package static let bundleId = "com.example.bench"

    /// The raw HTTP bodies.
    package let bodies: [Data]
    /// The roots that sign them, as DER.
    package let rootDERs: [[UInt8]]
    private let pkis: [TestPKI]

    package init(count: Int, chains: Int) throws {
        pkis = try (0..<chains).map { _ in try TestPKI() }
        rootDERs = try pkis.map { try $0.rootDER() }
        let signers = try pkis.map { NotificationSigner(signer: try JWSSigner(pki: $0)) }
        let events = SubscriptionEvent.samples(count: count, bundleId: Self.bundleId)
        bodies = try events.enumerated().map { index, event in
            Data(try signers[index % signers.count].body(for: event).utf8)
        }
    }

    /// A verifier trusting the workload's roots.
    package func verifier(cacheCapacity: Int) throws -> NotificationVerifier {
        let roots = pkis.map(\.root)
        return NotificationVerifier(
            configuration: .init(policy: try VerificationPolicy(bundleId: Self.bundleId, environment: .sandbox)),
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: roots, cacheCapacity: cacheCapacity))
        )
    }

    /// Writes the bodies to `file` as `{"id": n, "body": "..."}` lines, the input format of `asnp verify --jsonl`.
    package func writeJSONLines(to file: URL) throws {
        try Self.writeJSONLines(bodies.lazy.map { String(decoding: $0, as: UTF8.self) }, to: file)
    }

    /// One input line of `asnp verify --jsonl`.
    private struct Line: Encodable {
        package var id: Int
        package var body: String
    }

    /// Writes `bodies` to `file` as `{"id": n, "body": "..."}` lines, numbered from 0, a few megabytes at a time:
    /// `Data.write(to:)` of swift-corelibs-foundation (Swift 6.3.1) writes a `Data` of more than 2 GiB (about 180,000
    /// of these bodies) as its first 2 GiB less 4 KiB followed by its beginning again.
    package static func writeJSONLines(_ bodies: some Sequence<String>, to file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var chunk = Data()
        let encoder = JSONEncoder()
        for (index, body) in bodies.enumerated() {
            chunk.append(try encoder.encode(Line(id: index, body: body)))
            chunk.append(UInt8(ascii: "\n"))
            if chunk.count >= 8 << 20 {
                try handle.write(contentsOf: chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try handle.write(contentsOf: chunk)
    }
}

import AppStoreTestSupport
import Crypto
import Foundation
import NotificationBodies
import NotificationBodiesTestSupport
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// `asnp_raw_body`, the SQL twin of ``PackedBody/unpack(_:headers:)`` that audits use without asnp, against the Swift
/// one: the same bytes for every format the packer writes.
@Suite("asnp_raw_body in PostgreSQL rebuilds what PackedBody packed", .tags(.store))
struct PackedBodySQLTests {
    @Test(
        """
        every fixture body and 1,000 generated ones (valid, tampered, oddly encoded: verbatim, v1 and v2 forms), \
        packed in Swift, come back byte for byte from asnp_raw_body; corrupt forms and missing headers raise errors
        """
    )
    func agreesWithUnpack() async throws {
        let (server, configuration) = try await makeDatabase()
        try await withStore(configuration) { _ in }
        var bodies = try FixtureBody.all().map(\.bytes)
        var generator = GeneratedBodies(seed: 27)
        for _ in 0..<1_000 { bodies.append(try generator.next().bytes) }
        var forms = bodies.map { PackedBody(packing: $0) }
        // Formats the packer no longer picks first are still read: v1 of every packable body.
        forms += bodies.map { PackedBody(packing: $0, format: .packedV1) }.filter { $0.format == .packedV1 }
        let formats = Set(forms.map(\.format))
        #expect(formats == [.verbatim, .packedV1, .packedV2])

        var headers: [JWSHeaderDigest: [UInt8]] = [:]
        for form in forms { headers.merge(form.headers) { first, _ in first } }
        try await server.psql(
            configuration.database,
            "INSERT INTO jws_headers (digest, header) VALUES "
                + headers.map { "('\\x\($0.key)', '\(String(decoding: $0.value, as: UTF8.self))')" }
                .joined(separator: ", ")
        )
        // In chunks: psql takes its SQL as one argument, of at most 128 KiB.
        var chunks: [[String]] = [[]]
        var chunkSize = 0
        for (position, form) in forms.enumerated() {
            let value = "(\(position), '\\x\(hex(form.bytes))'::bytea)"
            if chunkSize + value.utf8.count > 100_000 {
                chunks.append([])
                chunkSize = 0
            }
            chunks[chunks.count - 1].append(value)
            chunkSize += value.utf8.count + 2
        }
        var rebuilt: [String] = []
        for values in chunks {
            rebuilt += try await server.psql(
                configuration.database,
                """
                SELECT string_agg(encode(sha256(asnp_raw_body(form)), 'hex'), ',' ORDER BY position)
                FROM (VALUES \(values.joined(separator: ", "))) AS forms(position, form)
                """
            ).split(separator: ",").map(String.init)
        }
        let expected = forms.map { form in
            hex(Array(SHA256.hash(data: (try? PackedBody.unpack(form.bytes, headers: { headers[$0] })) ?? [])))
        }
        #expect(rebuilt.count == forms.count)
        for (index, (sql, swift)) in zip(rebuilt, expected).enumerated() where sql != swift {
            Issue.record("form \(index) (\(forms[index].format)) rebuilt differently in SQL")
        }

        let packed = try #require(forms.first { $0.format == .packedV2 })
        for corrupt in [
            Array(packed.bytes.dropLast(3)), [3] + packed.bytes.dropFirst(), packed.bytes + [0],
        ] {
            await #expect(throws: (any Error).self) {
                try await server.psql(configuration.database, "SELECT asnp_raw_body('\\x\(hex(corrupt))')")
            }
        }
        try await server.psql(configuration.database, "DELETE FROM jws_headers")
        let missing = await #expect(throws: (any Error).self) {
            try await server.psql(configuration.database, "SELECT asnp_raw_body('\\x\(hex(packed.bytes))')")
        }
        #expect("\(missing.map { String(describing: $0) } ?? "")".contains("no JWS header with digest"))
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

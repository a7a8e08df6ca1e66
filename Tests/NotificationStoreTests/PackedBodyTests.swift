import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import Foundation
import NotificationStore
import Testing

@Suite struct PackedBodyTests {
    @Test func everyFixtureBodyComesBackByteForByteAndValidV2BodiesArePackedBelowAQuarter() throws {
        for fixture in try FixtureBody.all() {
            let packed = try roundTrip(fixture.bytes, fixture.name)
            guard fixture.isValidV2 else { continue }
            #expect(packed.format == .packedV1, "\(fixture.name) was stored verbatim")
            #expect(
                packed.bytes.count * 4 < fixture.bytes.count,
                "\(fixture.name): \(packed.bytes.count) of \(fixture.bytes.count)"
            )
        }
    }

    @Test func aValidBodyRefersToExactlyTheDistinctHeadersItCarries() throws {
        for fixture in try FixtureBody.all() where fixture.isValidV2 {
            let packed = PackedBody(packing: fixture.bytes)
            let expected = try Set(Self.jwsHeaders(in: fixture.bytes).map { JWSHeaderDigest(of: Array($0.utf8)[...]) })
            #expect(Set(packed.headers.keys) == expected, "\(fixture.name)")
            #expect(Set(try PackedBody.referencedDigests(in: packed.bytes)) == Set(packed.headers.keys))
            for (digest, header) in packed.headers {
                #expect(JWSHeaderDigest(of: header[...]) == digest)
            }
        }
    }

    /// Prints the sizes of a realistic body; the figure the issue's estimate rests on.
    @Test func sizeReport() throws {
        let fixture = try #require(
            FixtureBody.all().first { $0.isValidV2 && $0.name.hasPrefix("v2-cases:type-SUBSCRIBED") }
        )
        let packed = PackedBody(packing: fixture.bytes)
        let headerBytes = packed.headers.values.reduce(0) { $0 + $1.count }
        let ratio = Double(packed.bytes.count) / Double(fixture.bytes.count)
        print(
            "PackedBody \(fixture.name): raw \(fixture.bytes.count) B, packed \(packed.bytes.count) B "
                + "(\((ratio * 1000).rounded() / 10)%), \(packed.headers.count) header(s) of \(headerBytes) B stored once"
        )
        #expect(ratio < 0.25)
    }

    @Test(arguments: 0..<8) func tenThousandGeneratedBodiesComeBackByteForByte(chunk: Int) throws {
        var generator = GeneratedBodies(seed: UInt64(chunk))
        var validRaw = 0
        var validPacked = 0
        for index in 0..<1250 {
            let body = try generator.next()
            let label = "chunk \(chunk) body \(index) (\(body.mutation))"
            let packed = try roundTrip(body.bytes, label)
            if let expected = body.expectedFormat { #expect(packed.format == expected, "\(label)") }
            if let count = body.expectedHeaderCount { #expect(packed.headers.count == count, "\(label)") }
            if body.mutation == .valid {
                validRaw += body.bytes.count
                validPacked += packed.bytes.count
            }
        }
        #expect(validPacked * 4 < validRaw, "valid bodies packed to \(validPacked) of \(validRaw) bytes")
    }

    @Test func corruptStoredFormsThrowTypedErrors() throws {
        let fixture = try #require(FixtureBody.all().first { $0.isValidV2 })
        let packed = PackedBody(packing: fixture.bytes)
        let lookup: (JWSHeaderDigest) -> [UInt8]? = { packed.headers[$0] }
        try #require(packed.format == .packedV1)

        for length in 0..<packed.bytes.count {
            expect(.truncated, unpacking: Array(packed.bytes.prefix(length)), headers: lookup)
        }
        expect(.unknownFormat, unpacking: [2] + packed.bytes.dropFirst(), headers: lookup)
        expect(.unknownFormat, unpacking: [255], headers: lookup)
        expect(.malformed, unpacking: packed.bytes + [0], headers: lookup)
        expect(.malformed, unpacking: [1] + [UInt8](repeating: 0xFF, count: 12), headers: lookup)
        expect(.missingHeader, unpacking: packed.bytes, headers: { _ in nil })
        expect(.headerMismatch, unpacking: packed.bytes, headers: { packed.headers[$0].map { $0 + [65] } })
        #expect(throws: PackedBodyError.self) { try PackedBody.referencedDigests(in: [7]) }
        #expect(try PackedBody.unpack([0], headers: { _ in nil }) == [])
        #expect(try PackedBody.referencedDigests(in: [0, 1, 2]) == [])
    }

    @Test func unpackableBodiesAreStoredVerbatim() throws {
        for raw in [[], Array(#"{"signedPayload": "not a JWS"}"#.utf8), [0xFF, 0xFE, 0x22, 0x22]] as [[UInt8]] {
            let packed = PackedBody(packing: raw)
            #expect(packed.bytes == [0] + raw)
            #expect(packed.headers.isEmpty)
        }
    }

    // MARK: - Helpers

    /// Packs `raw`, checks the form rebuilds it and names the headers it carries, and returns the form.
    @discardableResult
    private func roundTrip(_ raw: [UInt8], _ label: String) throws -> PackedBody {
        let packed = PackedBody(packing: raw)
        let rebuilt = try PackedBody.unpack(packed.bytes) { packed.headers[$0] }
        #expect(rebuilt == raw, "\(label): rebuilt \(rebuilt.count) bytes of \(raw.count)")
        let referenced = try PackedBody.referencedDigests(in: packed.bytes)
        #expect(Set(referenced) == Set(packed.headers.keys), "\(label)")
        #expect(referenced.count == packed.headers.count, "\(label): a digest listed twice")
        if packed.format == .verbatim { #expect(packed.headers.isEmpty, "\(label)") }
        return packed
    }

    private func expect(
        _ code: PackedBodyError.Code,
        unpacking stored: [UInt8],
        headers: (JWSHeaderDigest) -> [UInt8]?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let body = try PackedBody.unpack(stored, headers: headers)
            Issue.record("\(stored.count) stored bytes unpacked to \(body.count) bytes", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        }
    }

    /// The header text of the outer JWS and of every signed value in its payload's `data`, found by decoding JSON.
    private static func jwsHeaders(in body: [UInt8]) throws -> [String] {
        func object(_ json: some DataProtocol) throws -> [String: Any] {
            try #require(JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        }
        let outer = try #require(try object(body)["signedPayload"] as? String).split(separator: ".")
        let payload = try object(try #require(Base64URL.decode(String(outer[1]))))
        // A signed value is a string of three segments whose first decodes to a JSON object naming its algorithm.
        let inner = (payload["data"] as? [String: Any] ?? [:]).values.compactMap { $0 as? String }.compactMap {
            let header = String($0.prefix { $0 != "." })
            let json = Base64URL.decode(header).flatMap { try? JSONSerialization.jsonObject(with: Data($0)) }
            return (json as? [String: Any])?["alg"] == nil ? nil : header
        }
        return [String(outer[0])] + inner
    }
}

/// A body from the shared fixtures.
private struct FixtureBody {
    var name: String
    var bytes: [UInt8]
    /// A V2 body that Apple's library accepts, or one of the scenario's signed bodies.
    var isValidV2: Bool

    static func all() throws -> [FixtureBody] {
        struct ScenarioLine: Decodable { var uuid: String, body: String }
        let v2 = try Fixtures.cases("v2-cases.jsonl").map {
            FixtureBody(name: "v2-cases:\($0.id)", bytes: Array($0.body.utf8), isValidV2: $0.kind == "valid")
        }
        let v1 = try Fixtures.cases("v1-cases.jsonl").map {
            FixtureBody(name: "v1-cases:\($0.id)", bytes: Array($0.body.utf8), isValidV2: false)
        }
        let scenario = try Fixtures.data("scenario.jsonl").split(separator: UInt8(ascii: "\n")).map {
            let line = try JSONDecoder().decode(ScenarioLine.self, from: Data($0))
            return FixtureBody(name: "scenario:\(line.uuid)", bytes: Array(line.body.utf8), isValidV2: true)
        }
        let apple = FixtureBody(
            name: "apple-real-test-notification",
            bytes: Array(try Fixtures.data("apple-real-test-notification.json")),
            isValidV2: true
        )
        return v2 + v1 + scenario + [apple]
    }
}

/// Bodies signed with the test PKI and mutated in the ways real and hostile senders encode things, from a seed.
///
/// The choices and positions follow the seed; ECDSA signatures and the test PKI's keys do not, so lengths may differ
/// by a byte between runs. A failure names the chunk, index and mutation.
private struct GeneratedBodies {
    enum Mutation: CaseIterable {
        case valid, tampered, innerHeaderDiffers, escapedInnerStrings, whitespace, escapedEnvelope, twoJWSStrings
        case paddedSegment, nonCanonicalLastCharacter, truncated, byteFlips, nonUTF8, empty
    }

    struct Body {
        var mutation: Mutation
        var bytes: [UInt8]
        var expectedFormat: PackedBody.Format?
        var expectedHeaderCount: Int?
    }

    /// String contents with escapes: quotes and backslashes in odd and even runs, `\/` and `\u0041`.
    static let escapes = [#"\""#, #"a\"b\\"#, #"\\\""#, #"\\"#, #"\\\\"#, #"a\/b \u0041 \"q\" \\"#, #"\u0022\\"#]

    private static let signers: (main: NotificationSigner, other: NotificationSigner)? = try? (
        NotificationSigner(signer: JWSSigner(pki: TestPKI())),
        NotificationSigner(signer: JWSSigner(pki: TestPKI(configuration: .init(name: "asnp Other"))))
    )

    private var random: SeededGenerator
    private var count = 0

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed &* 0x9E37_79B9 &+ 27)
    }

    mutating func next() throws -> Body {
        let signers = try #require(Self.signers)
        let mutation = Mutation.allCases[count % Mutation.allCases.count]
        count += 1
        let event = randomEvent()
        let payload = try signers.main.payload(for: event)
        let jws = try signers.main.signer.sign(payload)
        let envelope = try NotificationSigner.envelope(jws)
        switch mutation {
        case .valid:
            return Body(
                mutation: mutation,
                bytes: Array(envelope.utf8),
                expectedFormat: .packedV1,
                expectedHeaderCount: 1
            )
        case .tampered:
            return Body(
                mutation: mutation,
                bytes: Array(NotificationSigner.tampered(envelope).utf8),
                expectedFormat: .packedV1
            )
        case .innerHeaderDiffers:
            let body = try signers.main.body(for: try signers.other.payload(for: event))
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV1, expectedHeaderCount: 2)
        case .escapedInnerStrings:
            var json = String(decoding: try JSONEncoder().encode(payload), as: UTF8.self)
            let fake = String(repeating: "h", count: 64 + Int.random(in: 0..<8, using: &random)) + ".."
            json.removeFirst()
            json =
                #"{"note":"\#(GeneratedBodies.escapes.randomElement(using: &random)!)","fake":"\#(fake)","#
                + json.replacingOccurrences(of: #""signedTransactionInfo""#, with: #""signed\u0054ransactionInfo""#)
            let body = try NotificationSigner.envelope(try signers.main.signer.sign(payloadJSON: Data(json.utf8)))
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV1, expectedHeaderCount: 2)
        case .whitespace:
            let spaces = (0..<6).map { _ in [" ", "", "\n", "\t", "\r\n", "  \n "].randomElement(using: &random)! }
            let body =
                "\(spaces[0]){\(spaces[1])\"signedPayload\"\(spaces[2]):\(spaces[3])\"\(jws)\"\(spaces[4])}\(spaces[5])"
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV1, expectedHeaderCount: 1)
        case .escapedEnvelope:
            // Odd runs of escaped quotes, and strings ending in an escaped backslash: a scan that miscounts either
            // loses its place and takes the JWS for text between strings.
            let escape = GeneratedBodies.escapes.randomElement(using: &random)!
            let body = #"{"note":"\#(escape)","signed\u0050ayload":"\#(jws)","y":"\/"}"#
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV1, expectedHeaderCount: 1)
        case .twoJWSStrings:
            let body = #"{"signedPayload":"\#(jws)","again":"\#(jws)"}"#
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV1, expectedHeaderCount: 1)
        case .paddedSegment:
            var segments = jws.split(separator: ".").map(String.init)
            segments[Int.random(in: 0..<3, using: &random)] += Bool.random(using: &random) ? "=" : "=="
            let body = try NotificationSigner.envelope(segments.joined(separator: "."))
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .verbatim)
        case .nonCanonicalLastCharacter:
            var segments = jws.split(separator: ".").map { Array($0.utf8) }
            let segment = Int.random(in: 0..<3, using: &random)
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            let value = try #require(alphabet.firstIndex(of: segments[segment].last!))
            segments[segment][segments[segment].count - 1] = alphabet[value | 1]
            let body = try NotificationSigner.envelope(
                String(decoding: Array(segments.joined(separator: [46])), as: UTF8.self)
            )
            let spareBits = segment == 1 && segments[1].count % 4 != 0
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: spareBits ? .verbatim : nil)
        case .truncated:
            let bytes = Array(envelope.utf8)
            return Body(mutation: mutation, bytes: Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random))))
        case .byteFlips:
            var bytes = Array(envelope.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return Body(mutation: mutation, bytes: bytes)
        case .nonUTF8:
            var bytes = Array(envelope.utf8)
            let invalid: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xF0, 0x90, 0x28, 0xBC], [0x80]]
            if Bool.random(using: &random) {
                // Beside the JWS, in a string of its own: still packed, the bytes carried in the prefix.
                bytes =
                    Array(#"{"note":""#.utf8) + invalid.randomElement(using: &random)!
                    + Array(#"","signedPayload":""#.utf8)
                bytes += Array(jws.utf8) + Array(#""}"#.utf8)
                return Body(mutation: mutation, bytes: bytes, expectedFormat: .packedV1, expectedHeaderCount: 1)
            }
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0...bytes.count, using: &random)
                bytes.insert(contentsOf: invalid.randomElement(using: &random)!, at: position)
            }
            return Body(mutation: mutation, bytes: bytes)
        case .empty:
            return Body(mutation: mutation, bytes: [], expectedFormat: .verbatim, expectedHeaderCount: 0)
        }
    }

    private mutating func randomEvent() -> SubscriptionEvent {
        let (type, subtype) = SubscriptionEvent.typicalLifecycle.randomElement(using: &random)!
        let start: Int64 = 1_767_225_600_000
        let signedDate = start + Int64.random(in: 0..<10_000_000_000, using: &random)
        let revoked = Int.random(in: 0..<10, using: &random) == 0
        return SubscriptionEvent(
            notificationType: revoked ? .refund : type,
            subtype: revoked ? nil : subtype,
            notificationUUID: String(random.next(), radix: 16) + "-" + String(random.next(), radix: 16),
            signedDate: signedDate,
            bundleId: ["com.example.notes", "com.example.photos.pro"].randomElement(using: &random)!,
            appAppleId: Bool.random(using: &random) ? Int64.random(in: 1...9_999_999_999, using: &random) : nil,
            environment: Bool.random(using: &random) ? .sandbox : .production,
            originalTransactionId: String(Int.random(in: 1...999_999_999_999, using: &random)),
            transactionId: String(Int.random(in: 1...999_999_999_999_999, using: &random)),
            productId: "com.example.notes.pro." + ["monthly", "yearly", "weekly"].randomElement(using: &random)!,
            revocationDate: revoked ? signedDate : nil
        )
    }
}

import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import Foundation
import NotificationBodies
import NotificationBodiesTestSupport
import Testing

@Suite(.tags(.fast)) struct PackedBodyTests {
    @Test func everyFixtureBodyComesBackByteForByteAndValidV2BodiesArePackedInFormat2BelowFormat1() throws {
        for fixture in try FixtureBody.all() {
            let packed = try roundTrip(fixture.bytes, fixture.name)
            let v1 = try roundTrip(fixture.bytes, fixture.name, format: .packedV1)
            guard fixture.isValidV2 else { continue }
            #expect(packed.format == .packedV2, "\(fixture.name) was stored as \(packed.format)")
            #expect(v1.format == .packedV1, "\(fixture.name) was stored as \(v1.format) by the format 1 writer")
            #expect(
                packed.bytes.count < v1.bytes.count,
                "\(fixture.name): \(packed.bytes.count) bytes, \(v1.bytes.count) in format 1"
            )
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

    /// Prints the sizes of a realistic body, the average over the valid fixtures in both formats, and the time a pack
    /// and an unpack take; the figures the issue's estimate rests on.
    @Test func sizeReport() throws {
        let fixtures = try FixtureBody.all().filter(\.isValidV2)
        let fixture = try #require(fixtures.first { $0.name.hasPrefix("v2-cases:type-SUBSCRIBED") })
        let packed = PackedBody(packing: fixture.bytes)
        let v1 = PackedBody(packing: fixture.bytes, format: .packedV1)
        let headerBytes = packed.headers.values.reduce(0) { $0 + $1.count }
        let ratio = Double(packed.bytes.count) / Double(fixture.bytes.count)
        print(
            "PackedBody \(fixture.name): raw \(fixture.bytes.count) B, packed \(packed.bytes.count) B "
                + "(\(percent(ratio))), format 1 \(v1.bytes.count) B, \(packed.headers.count) header(s) of "
                + "\(headerBytes) B stored once"
        )
        #expect(ratio < 0.25)

        let raw = fixtures.reduce(0) { $0 + $1.bytes.count }
        let v2Total = fixtures.reduce(0) { $0 + PackedBody(packing: $1.bytes).bytes.count }
        let v1Total = fixtures.reduce(0) { $0 + PackedBody(packing: $1.bytes, format: .packedV1).bytes.count }
        let v2Ratios = fixtures.map { Double(PackedBody(packing: $0.bytes).bytes.count) / Double($0.bytes.count) }
        print(
            "PackedBody \(fixtures.count) valid fixtures: raw \(raw / fixtures.count) B, format 2 "
                + "\(v2Total / fixtures.count) B, format 1 \(v1Total / fixtures.count) B on average; format 2 / raw "
                + "\(percent(v2Ratios.reduce(0, +) / Double(v2Ratios.count))) on average"
        )
        #expect(v2Total < v1Total)

        let iterations = 200
        let clock = ContinuousClock()
        var forms: [PackedBody] = []
        let packing = clock.measure {
            for _ in 0..<iterations { forms.append(PackedBody(packing: fixture.bytes)) }
        }
        var rebuilt = 0
        let unpacking = try clock.measure {
            for form in forms { rebuilt += try PackedBody.unpack(form.bytes) { form.headers[$0] }.count }
        }
        #expect(rebuilt == fixture.bytes.count * iterations)
        print(
            "PackedBody \(fixture.bytes.count) B body: pack \(microseconds(packing / iterations)) µs, "
                + "unpack \(microseconds(unpacking / iterations)) µs (this build's optimization)"
        )
    }

    @Test(arguments: 0..<8) func tenThousandGeneratedBodiesComeBackByteForByte(chunk: Int) throws {
        var generator = GeneratedBodies(seed: UInt64(chunk))
        var validRaw = 0
        var validPacked = 0
        for index in 0..<1250 {
            let body = try generator.next()
            let label = "chunk \(chunk) body \(index) (\(body.mutation))"
            let packed = try roundTrip(body.bytes, label)
            let v1 = try roundTrip(body.bytes, label + " in format 1", format: .packedV1)
            if let expected = body.expectedFormat { #expect(packed.format == expected, "\(label)") }
            // The payloads the packer decoded make the same decoded JSON as decoding them again.
            var known = DecodedNotificationJSON.KnownPayloads()
            _ = PackedBody(packing: body.bytes, decoded: &known)
            #expect(Self.decodedJSON(body.bytes, known) == Self.decodedJSON(body.bytes, .init()), "\(label)")
            if body.mutation == .valid { #expect(known.outer != nil && known.inner.count == 2, "\(label)") }
            if let count = body.expectedHeaderCount { #expect(packed.headers.count == count, "\(label)") }
            if packed.format == .packedV2 {
                #expect(v1.format == .packedV1, "\(label)")
                #expect(packed.bytes.count < v1.bytes.count, "\(label): \(packed.bytes.count) of \(v1.bytes.count)")
            }
            if body.mutation == .valid {
                validRaw += body.bytes.count
                validPacked += packed.bytes.count
            }
        }
        #expect(validPacked * 4 < validRaw, "valid bodies packed to \(validPacked) of \(validRaw) bytes")
    }

    /// The decoded JSON of `body` and the members it carries decoded, or why it cannot be built.
    static func decodedJSON(_ body: [UInt8], _ known: DecodedNotificationJSON.KnownPayloads) -> String {
        do {
            let built = try DecodedNotificationJSON.v2(body: body, known: known)
            return String(decoding: built.json, as: UTF8.self) + " \(built.decoded.map(\.rawValue).sorted())"
        } catch {
            return "unbuildable: \(error.reason)"
        }
    }

    @Test(arguments: [PackedBody.Format.packedV1, .packedV2])
    func corruptStoredFormsThrowTypedErrors(format: PackedBody.Format) throws {
        let fixture = try #require(FixtureBody.all().first { $0.isValidV2 })
        let packed = PackedBody(packing: fixture.bytes, format: format)
        let lookup: (JWSHeaderDigest) -> [UInt8]? = { packed.headers[$0] }
        try #require(packed.format == format)

        for length in 0..<packed.bytes.count {
            expect(.truncated, unpacking: Array(packed.bytes.prefix(length)), headers: lookup)
            #expect(throws: PackedBodyError.self) {
                try PackedBody.referencedDigests(in: Array(packed.bytes.prefix(length)))
            }
        }
        expect(.unknownFormat, unpacking: [3] + packed.bytes.dropFirst(), headers: lookup)
        expect(.unknownFormat, unpacking: [255], headers: lookup)
        expect(.malformed, unpacking: packed.bytes + [0], headers: lookup)
        expect(.malformed, unpacking: [format.rawValue] + [UInt8](repeating: 0xFF, count: 12), headers: lookup)
        expect(.missingHeader, unpacking: packed.bytes, headers: { _ in nil })
        expect(.headerMismatch, unpacking: packed.bytes, headers: { packed.headers[$0].map { $0 + [65] } })
        // Read as the other format, a form loses its framing: an error, never a crash or a wrong body.
        let other: PackedBody.Format = format == .packedV1 ? .packedV2 : .packedV1
        #expect(throws: PackedBodyError.self) {
            try PackedBody.unpack([other.rawValue] + packed.bytes.dropFirst(), headers: lookup)
        }
    }

    @Test func formsStoredInFormat1StillUnpackAndTheFormat1WriterStillWritesThem() throws {
        let real = try #require(FixtureBody.all().first { $0.name == "v2-cases:consumable-no-renewal" })
        let cases = [
            (StoredForms.synthetic, StoredForms.syntheticV1, 2),
            (real.bytes, StoredForms.consumableNoRenewalV1, 1),
        ]
        for (raw, hex, headerCount) in cases {
            let stored = try StoredForms.bytes(hex: hex)
            let packed = PackedBody(packing: raw)
            #expect(stored.first == PackedBody.Format.packedV1.rawValue)
            #expect(packed.format == .packedV2)
            #expect(packed.headers.count == headerCount)
            #expect(try PackedBody.unpack(stored) { packed.headers[$0] } == raw)
            #expect(Set(try PackedBody.referencedDigests(in: stored)) == Set(packed.headers.keys))
            #expect(PackedBody(packing: raw, format: .packedV1).bytes == stored)
            #expect(packed.bytes.count < stored.count, "\(packed.bytes.count) bytes, \(stored.count) in format 1")
        }
    }

    @Test func theFormat2LayoutIsPinned() throws {
        let stored = try StoredForms.bytes(hex: StoredForms.syntheticV2)
        let packed = PackedBody(packing: StoredForms.synthetic)
        #expect(packed.bytes == stored)
        #expect(try PackedBody.unpack(stored) { packed.headers[$0] } == StoredForms.synthetic)
        #expect(Set(try PackedBody.referencedDigests(in: stored)) == Set(packed.headers.keys))
    }

    @Test func verbatimAndUnknownFormsAreReadAsSuch() throws {
        #expect(throws: PackedBodyError.self) { try PackedBody.referencedDigests(in: [7]) }
        #expect(throws: PackedBodyError.self) { try PackedBody.referencedDigests(in: []) }
        #expect(try PackedBody.unpack([0], headers: { _ in nil }) == [])
        #expect(try PackedBody.referencedDigests(in: [0, 1, 2]) == [])
        #expect(PackedBody.Format.packedV2.description == "packed-v2")
        #expect(PackedBody.Format(rawValue: 3).description == "unknown-3")
    }

    @Test func unpackableBodiesAreStoredVerbatim() throws {
        for raw in [[], Array(#"{"signedPayload": "not a JWS"}"#.utf8), [0xFF, 0xFE, 0x22, 0x22]] as [[UInt8]] {
            for packed in [PackedBody(packing: raw), PackedBody(packing: raw, format: .packedV1)] {
                #expect(packed.bytes == [0] + raw)
                #expect(packed.headers.isEmpty)
            }
        }
    }

    // MARK: - Helpers

    /// Packs `raw` (in `format` only, when given), checks the form rebuilds it and names the headers it carries, and
    /// returns the form.
    @discardableResult
    private func roundTrip(_ raw: [UInt8], _ label: String, format: PackedBody.Format? = nil) throws -> PackedBody {
        let packed = format.map { PackedBody(packing: raw, format: $0) } ?? PackedBody(packing: raw)
        let rebuilt = try PackedBody.unpack(packed.bytes) { packed.headers[$0] }
        #expect(rebuilt == raw, "\(label): rebuilt \(rebuilt.count) bytes of \(raw.count)")
        let referenced = try PackedBody.referencedDigests(in: packed.bytes)
        #expect(Set(referenced) == Set(packed.headers.keys), "\(label)")
        #expect(referenced.count == packed.headers.count, "\(label): a digest listed twice")
        if packed.format == .verbatim { #expect(packed.headers.isEmpty, "\(label)") }
        if let format, packed.format != .verbatim { #expect(packed.format == format, "\(label)") }
        return packed
    }

    private func percent(_ ratio: Double) -> String {
        "\((ratio * 1000).rounded() / 10)%"
    }

    private func microseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return ((Double(seconds) * 1e6 + Double(attoseconds) / 1e12) * 10).rounded() / 10
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

/// Stored forms: the format 1 ones written by the format 1 writer of commit 38277d7, before format 2 existed (data
/// already in the table, which every later reader must rebuild, and which the format 1 writer must still produce byte
/// for byte); the format 2 one pins that layout, which a later change may not alter without a new format byte.
private enum StoredForms {
    /// The synthetic body in format 2.
    static let syntheticV2 = """
        02127b227369676e65645061796c6f6164223a22dcb05fa2baf8d8505e7f636faa9f97a6d1bcb07ddfbbfac662c2c761c44d2ccd
        02517b226e6f74696669636174696f6e54797065223a224449445f52454e4557222c226e6f7465223a22615c22625c5c222c2264
        617461223a7b227369676e65645472616e73616374696f6e496e666f223a22dcb05fa2baf8d8505e7f636faa9f97a6d1bcb07ddf
        bbfac662c2c761c44d2ccd317b227472616e73616374696f6e4964223a2232303030303030313233343536373839222c22707269
        6365223a393939307d400b30557a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186abd0f51a3f6489aed3f8
        1d42678cb1d6fb20456a8fb4d9fe23486d92b7dc012617222c227369676e656452656e6577616c496e666f223a22fa39298dbefe
        2b3ee8320c148518c904fd560f77860fb21ca5684644f9930fe7157b226175746f52656e6577537461747573223a317d400b3055
        7a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186abd0f51a3f6489aed3f81d42678cb1d6fb20456a8fb4d9
        fe23486d92b7dc012603227d7d400b30557a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186abd0f51a3f64
        89aed3f81d42678cb1d6fb20456a8fb4d9fe23486d92b7dc012602227d
        """

    /// The synthetic body: two inner JWS literals with different headers, escapes in the payload.
    static let syntheticV1 = """
        01127b227369676e65645061796c6f6164223a22dcb05fa2baf8d8505e7f636faa9f97a6d1bcb07ddfbbfac662c2c761c44d2ccd
        02517b226e6f74696669636174696f6e54797065223a224449445f52454e4557222c226e6f7465223a22615c22625c5c222c2264
        617461223a7b227369676e65645472616e73616374696f6e496e666f223a22dcb05fa2baf8d8505e7f636faa9f97a6d1bcb07ddf
        bbfac662c2c761c44d2ccdb1012e65794a30636d46756332466a64476c76626b6c6b496a6f694d6a41774d4441774d4445794d7a
        51314e6a63344f534973496e427961574e6c496a6f354f546b7766512e437a425665705f453651347a57483269782d77524e6c75
        417063727646446c6567366a4e3868633859596172305055615032534a7274503448554a6e6a4c48572d794246616f2d30326634
        6a53473253743977424a67222c227369676e656452656e6577616c496e666f223a22fa39298dbefe2b3ee8320c148518c904fd56
        0f77860fb21ca5684644f9930fe7772e65794a6864585276556d56755a5864546447463064584d694f6a46392e437a425665705f
        453651347a57483269782d77524e6c75417063727646446c6567366a4e3868633859596172305055615032534a7274503448554a
        6e6a4c48572d794246616f2d303266346a53473253743977424a67227d7d56437a425665705f453651347a57483269782d77524e
        6c75417063727646446c6567366a4e3868633859596172305055615032534a7274503448554a6e6a4c48572d794246616f2d3032
        66346a53473253743977424a6702227d
        """

    /// The fixture `v2-cases:consumable-no-renewal`.
    static let consumableNoRenewalV1 = """
        01137b227369676e65645061796c6f6164223a2022f35efdbd404e9c5bf6c4f4387d31d0d1be93e7821f9556f9a268b171e17315
        3501e5017b226e6f74696669636174696f6e54797065223a224f4e455f54494d455f434841524745222c226e6f74696669636174
        696f6e55554944223a2231393539623965662d353864302d343637342d623334642d653733643630633239306430222c22646174
        61223a7b226170704170706c654964223a313233343536373839302c2262756e646c654964223a22636f6d2e6578616d706c652e
        6e6f746573222c2262756e646c6556657273696f6e223a223432222c22656e7669726f6e6d656e74223a2253616e64626f78222c
        227369676e65645472616e73616374696f6e496e666f223a22f35efdbd404e9c5bf6c4f4387d31d0d1be93e7821f9556f9a268b1
        71e1731535e5062e65794a30636d46756332466a64476c76626b6c6b496a6f694e6a45344f44637a4d54557a4d7a6b344f446332
        4969776962334a705a326c7559577855636d46756332466a64476c76626b6c6b496a6f694d7a41774d4441774d4441774d534973
        496e646c596b39795a47567954476c755a556c305a57314a5a434936496a4d784f4455314f5459784d4451694c434a696457356b
        6247564a5a434936496d4e766253356c654746746347786c4c6d35766447567a4969776963484a765a48566a64456c6b496a6f69
        593239744c6d56345957317762475575626d39305a584d7559323970626e4d784d4441694c434a7a64574a7a59334a7063485270
        62323548636d393163456c6b5a57353061575a705a5849694f6d353162477773496e4231636d4e6f59584e6c524746305a534936
        4d5463354d5463324d7a49774d4441774d43776962334a705a326c755957785164584a6a6147467a5a555268644755694f6a4533
        4f5445334e6a4d794d4441774d444173496d563463476c795a584e455958526c496a7075645778734c434a786457467564476c30
        655349364d53776964486c775a534936496b4e76626e4e3162574669624755694c434a70626b467763453933626d567963326870
        63465235634755694f694a5156564a4453454654525551694c434a7a615764755a5752455958526c496a6f784e7a6b784e7a597a
        4d6a41774d4441774c434a6c626e5a70636d39756257567564434936496c4e68626d5269623367694c434a30636d46756332466a
        64476c76626c4a6c59584e7662694936496c4256556b4e4951564e464969776963335276636d566d636d397564434936496c5654
        51534973496e4e3062334a6c5a6e4a76626e524a5a434936496a45304d7a51304d534973496e427961574e6c496a6f354f546b77
        4c434a6a64584a795a57356a65534936496c565452434973496d4677634652795957357a59574e3061573975535751694f694933
        4d4451774d4441774d444178496e302e70374f514b645f544b453447792d6c53476432376448334a5957617274744f78465a525a
        39374b6d325f325773586651426733683737656975656667412d5265643259767352374544446f526579536a617430676177227d
        2c2276657273696f6e223a22322e30222c227369676e656444617465223a313739313736333230303030307d5659555f43594d53
        7a506d38313833703742507336766f4536495336636247504e4e7977547347486149664f35334850307069554a516a6266553465
        47436472556746384f436a385759694b6478365f4879775f69525102227d
        """

    /// A small body that packs, its headers only long enough to be referenced: two inner JWS literals with different
    /// headers, and escaped quotes and backslashes in the outer payload.
    static let synthetic: [UInt8] = {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","x5c":["MIIBleaf","MIIBintermediate","MIIBroot"]}"#.utf8))
        let other = Base64URL.encode(Array(#"{"alg":"ES256","x5c":["MIIBother","MIIBintermediate","MIIBroot"]}"#.utf8))
        let transaction = Base64URL.encode(Array(#"{"transactionId":"2000000123456789","price":9990}"#.utf8))
        let renewal = Base64URL.encode(Array(#"{"autoRenewStatus":1}"#.utf8))
        let signature = Base64URL.encode((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        let payload = Base64URL.encode(
            Array(
                (#"{"notificationType":"DID_RENEW","note":"a\"b\\","data":{"signedTransactionInfo":"\#(header)."#
                    + #"\#(transaction).\#(signature)","signedRenewalInfo":"\#(other).\#(renewal).\#(signature)"}}"#)
                    .utf8
            )
        )
        return Array(#"{"signedPayload":"\#(header).\#(payload).\#(signature)"}"#.utf8)
    }()

    /// The bytes of `hex`, line breaks ignored.
    static func bytes(hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8.filter { $0 != UInt8(ascii: "\n") })
        return try stride(from: 0, to: digits.count, by: 2).map {
            try #require(UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16))
        }
    }
}

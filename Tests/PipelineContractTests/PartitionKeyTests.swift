import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import Foundation
import Testing

@testable import PipelineContract

@Suite("The partition key peek and the raw-topic headers", .tags(.fast))
struct PartitionKeyTests {
    @Test("V2: the signed transaction's originalTransactionId, else the notificationUUID")
    func v2() throws {
        for fixture in Fixtures.v2Cases where fixture.expectedStatus == "OK" {
            let key = try #require(PartitionKey.peek(body: Data(fixture.body.utf8), version: 2), "\(fixture.id)")
            if case .string(let expected) = fixture.expect["originalTransactionId"] {
                #expect(key == PartitionKey(value: expected, basis: .originalTransactionId), "\(fixture.id)")
            } else if case .string(let uuid) = fixture.expect["notificationUUID"] {
                #expect(key == PartitionKey(value: uuid, basis: .notificationUUID), "\(fixture.id)")
            }
        }
    }

    @Test("V1: original_transaction_id from the top level or the receipt")
    func v1() throws {
        for fixture in Fixtures.v1Cases where fixture.expectedStatus == "OK" {
            guard case .string(let expected) = fixture.expect["originalTransactionId"] else { continue }
            let key = PartitionKey.peek(body: Data(fixture.body.utf8), version: 1)
            #expect(key == PartitionKey(value: expected, basis: .originalTransactionId), "\(fixture.id)")
        }
    }

    @Test(
        "Any JSON object gets a key (a body hash when nothing else), anything else none",
        arguments: [
            (#"{"hello": "world"}"#, true), (#"{"signedPayload": 12345}"#, true),
            (#"{"signedPayload": "a.b.c"}"#, true),
            (#"{"signedPayload": "@@@.###.$$$"}"#, true), ("[]", false), ("\"text\"", false), ("", false),
            ("{", false), ("not json", false), ("null", false),
        ]
    )
    func shapes(body: String, isObject: Bool) {
        for version in [1, 2] {
            let key = PartitionKey.peek(body: Data(body.utf8), version: version)
            #expect((key != nil) == isObject)
            if let key {
                #expect(key.basis == .bodyHash)
                #expect(key.value.hasPrefix("body-") && key.value.count == 37)
                #expect(key == PartitionKey.peek(body: Data(body.utf8), version: version), "stable")
            }
        }
    }

    @Test("Headers round-trip; a missing or invalid one is named")
    func headers() throws {
        let headers = RawNotificationHeaders(
            version: 2,
            environment: .sandbox,
            app: "notes",
            receivedAt: Date(timeIntervalSince1970: 1_795_000_000.5),
            requestID: "abc",
            source: .history
        )
        let fields = Dictionary(uniqueKeysWithValues: headers.fields.map { ($0.name, $0.value) })
        #expect(fields[RawNotificationHeaders.Name.receivedAt] == "2026-11-18T11:06:40.500Z")
        let read = try RawNotificationHeaders(fields: fields)
        #expect(read.version == 2 && read.environment == .sandbox && read.app == "notes" && read.source == .history)
        #expect(abs(read.receivedAt.timeIntervalSince(headers.receivedAt)) < 0.001)
        var missing = fields
        missing[RawNotificationHeaders.Name.app] = nil
        #expect(throws: RawNotificationHeadersError(header: "asnp-app")) { try RawNotificationHeaders(fields: missing) }
        var invalid = fields
        invalid[RawNotificationHeaders.Name.version] = "3"
        #expect(throws: RawNotificationHeadersError(header: "asnp-version", value: "3")) {
            try RawNotificationHeaders(fields: invalid)
        }
    }

    @Test("Every V2 fixture takes the in-place peek when plain, with the decoding peek's key")
    func plainPeekOnFixtures() throws {
        let fixtures = Fixtures.v2Cases
        try #require(!fixtures.isEmpty)
        for fixture in fixtures {
            let body = Data(fixture.body.utf8)
            let plain = PartitionKey.plainPeek(body)
            if fixture.expectedStatus == "OK" { #expect(plain != nil, "\(fixture.id): Apple's bodies are plain") }
            if let plain { #expect(plain == PartitionKey.decodingPeek(body, version: 2), "\(fixture.id)") }
        }
    }

    @Test("The in-place peek answers only what the decoding peek answers, for bodies of every shape")
    func plainPeekAgreesOnEveryShape() {
        var answered = 0
        var total = 0
        func check(_ body: String) {
            total += 1
            let data = Data(body.utf8)
            guard let plain = PartitionKey.plainPeek(data) else { return }
            answered += 1
            #expect(plain == PartitionKey.decodingPeek(data, version: 2), "\(body)")
        }
        for outer in PeekShapes.outer {
            for payload in PeekShapes.payloads {
                for transaction in PeekShapes.transactions {
                    check(outer(PeekShapes.jws(payload(PeekShapes.jws(transaction)))))
                }
            }
        }
        // Single-byte changes to a plain payload, from the bytes that matter to JSON.
        var random = SeededGenerator(seed: 11)
        let payload = Array(PeekShapes.payloads[0](PeekShapes.jws(PeekShapes.transactions[0])).utf8)
        let alphabet = Array(#"{}[]",:\ 0.-e9aztfnul"#.utf8) + Array("é".utf8)
        for _ in 0..<3_000 {
            var mutated = payload
            for _ in 0...Int.random(in: 0...2, using: &random) {
                mutated[Int.random(in: 0..<mutated.count, using: &random)] = alphabet.randomElement(using: &random)!
            }
            check(PeekShapes.outer[0](PeekShapes.jws(String(decoding: mutated, as: UTF8.self))))
        }
        // Not vacuous: most shapes are plain and were answered in place.
        #expect(answered > total / 3, "\(answered) of \(total)")
    }

    @Test(
        "The plain JSON reader refuses what is not plain, valid JSON",
        arguments: [
            #"{"a":01}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":1,}"#,
            #"{"a" 1}"#, #"{a:1}"#, #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":[1,]}"#, #"{"a":[1 2]}"#, #"{"a":"x\"y"}"#,
            #"{"a":"é"}"#, "{\"a\":\"\u{1}\"}", #"{"a":1}x"#, #"{"a":1}}"#, #"{"a":"x"#, "[1]", "", "  ", #""s""#,
            #"{"a":1,"a":2}"#, #"{"x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
        ]
    )
    func plainReaderRefuses(json: String) {
        let members = Array(json.utf8).withUnsafeBufferPointer { PlainJSONObject.members(of: $0, named: ["a"]) }
        #expect(members == nil)
    }

    @Test("The plain JSON reader reads strings of any length, refusing an escape, control or non-ASCII byte anywhere")
    func plainReaderStrings() {
        func member(_ characters: [UInt8]) -> [PlainJSONObject.Value?]? {
            (Array(#"{"a":""#.utf8) + characters + Array(#""}"#.utf8)).withUnsafeBufferPointer {
                PlainJSONObject.members(of: $0, named: ["a"])
            }
        }
        for length in 0..<40 {
            let plain = Array(repeating: UInt8(ascii: "x"), count: length)
            #expect(member(plain) == [.string(6..<(6 + length))], "length \(length)")
            for position in 0..<length {
                for special in [UInt8(ascii: "\\"), 0x01, 0x1F, 0x80, 0xC3, 0xFF] {
                    var characters = plain
                    characters[position] = special
                    #expect(member(characters) == nil, "byte \(special) at \(position) of \(length)")
                }
            }
        }
    }

    @Test("The plain JSON reader finds members at the top level only, whatever surrounds them")
    func plainReaderFindsMembers() throws {
        let json =
            #" { "n": [1, -2.5e+3, 0, {"a": "inner"}], "a" : "top", "o": {"a": {}}, "b": {"c": true}, "z": null } "#
        let members = try #require(
            Array(json.utf8).withUnsafeBufferPointer { PlainJSONObject.members(of: $0, named: ["a", "b", "z", "q"]) }
        )
        let bytes = Array(json.utf8)
        guard case .string(let a)? = members[0], case .object(let b)? = members[1] else {
            Issue.record("unexpected members \(members)")
            return
        }
        #expect(String(decoding: bytes[a], as: UTF8.self) == "top")
        #expect(String(decoding: bytes[b], as: UTF8.self) == #"{"c": true}"#)
        #expect(members[2] == .other)
        #expect(members[3] == nil)
    }
    @Test("The plain JSON reader follows paths into objects in one reading: absent, not an object, or a duplicate")
    func plainReaderFollowsPaths() {
        func read(_ json: String, _ paths: [[String]]) -> [String?]? {
            let bytes = Array(json.utf8)
            return bytes.withUnsafeBufferPointer { PlainJSONObject.members(of: $0, at: paths) }.map { members in
                members.map { member -> String? in
                    switch member {
                    case .string(let range)?, .object(let range)?: String(decoding: bytes[range], as: UTF8.self)
                    case .other?: "other"
                    case nil: nil
                    }
                }
            }
        }
        let json = #"{"u": "id", "data": {"s": "jws", "n": {"deep": 1}}, "other": {"s": "not this"}}"#
        let paths = [["u"], ["data", "s"], ["data", "n", "deep"], ["data", "missing"], ["u", "s"], [], ["data"]]
        #expect(read(json, paths) == ["id", "jws", "other", nil, nil, nil, #"{"s": "jws", "n": {"deep": 1}}"#])
        #expect(read(#"{"data": 5, "u": "id"}"#, [["data", "s"], ["u"]]) == [nil, "id"])
        // A wanted member twice, at either level, is the real decoder's to judge.
        #expect(read(#"{"data": {"s": "a", "s": "b"}}"#, [["data", "s"]]) == nil)
        #expect(read(#"{"data": {"s": "a"}, "data": {}}"#, [["data", "s"]]) == nil)
        // Not wanted, a duplicate is read past as before.
        #expect(read(#"{"data": {"x": 1, "x": 2, "s": "a"}}"#, [["data", "s"]]) == ["a"])
    }
}

/// Bodies for comparing the two peeks: outer objects, payloads and transactions, plain and not.
private enum PeekShapes {
    /// An unsigned compact JWS of `payload` (the peek does not verify).
    static func jws(_ payload: String) -> String {
        "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(Array(payload.utf8)) + ".c2ln"
    }

    static let outer: [@Sendable (String) -> String] = [
        { #"{"signedPayload":"\#($0)"}"# },
        { " {\n  \"signedPayload\" : \"\($0)\"\t}\r\n" },
        { #"{"other":[1,{"a":null},"x"],"signedPayload":"\#($0)","n":-0.5E-2}"# },
        { #"{"signedPayload":"\#($0)","signedPayload":"\#($0)"}"# },
        { #"{"signedPayload":"\#($0)"}garbage"# },
        { #"{"signedPayload":"\#($0)",}"# },
        { #"{"signedPayload":"\#($0)\/"}"# },
        { #"{"signedPayload":12}"# + String($0.prefix(0)) },
        { #"["\#($0)"]"# },
    ]

    static let payloads: [@Sendable (String) -> String] = [
        {
            #"{"notificationType":"DID_RENEW","notificationUUID":"u-1","data":{"appAppleId":1,"#
                + #""signedTransactionInfo":"\#($0)"},"signedDate":1}"#
        },
        { #"{"notificationUUID":"u-2","data":null,"x":"\#($0)"}"# },
        { #"{"notificationUUID":"u-3","data":"\#($0)"}"# },
        { #"{"notificationUUID":"","data":{"signedTransactionInfo":"\#($0)"}}"# },
        { #"{"notificationUUID":"u\u002d5","data":{"signedTransactionInfo":"\#($0)"}}"# },
        { #"{"notificationUUID":"u-6","data":{"signedTransactionInfo":"\#($0)","signedTransactionInfo":"x"}}"# },
        { #"{"notificationUUID":"u-7","data":{"signedTransactionInfo":"not a jws"},"t":"\#($0)"}"# },
        { #"{"notificationUUID":"ü-8","data":{"signedTransactionInfo":"\#($0)"}}"# },
        { #"{"data":{"signedTransactionInfo":"\#($0)"},"notificationUUID":7}"# },
        { #"{"notificationUUID":"u-10","data":{"signedTransactionInfo":"\#($0)"}"# },
        { #"[{"notificationUUID":"u-11","data":{"signedTransactionInfo":"\#($0)"}}]"# },
    ]

    static let transactions = [
        #"{"transactionId":"2000","originalTransactionId":"1000","price":9990,"signedDate":1}"#,
        #"{"originalTransactionId":""}"#, #"{"originalTransactionId":10}"#, #"{"originalTransactionId":"100"}"#,
        #"{"originalTransactionId":"1","originalTransactionId":"2"}"#, #"{"originalTransactionId":"é"}"#, "[1]",
        "not json", "{}", #"{"a":[1,2.5e3,-0,true,false,null,{"b":{}}],"originalTransactionId":"42"}"#,
    ]
}

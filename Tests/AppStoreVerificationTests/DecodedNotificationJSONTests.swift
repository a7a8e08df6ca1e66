import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

@Suite("The decoded JSON built from the signed bytes: lossless, and the same bytes every time", .tags(.fast))
struct DecodedNotificationJSONTests {
    /// The payload of a compact JWS, decoded here without the package's own base64url code.
    static func jwsPayload(_ compact: String) throws -> Any {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: base64)))
    }

    /// What the decoded JSON must hold, computed independently: the outer payload parsed, the three JWS members
    /// this version verifies taken out of it and decoded beside it.
    static func expected(body: String) throws -> NSDictionary {
        let envelope = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let signedPayload = try #require(envelope["signedPayload"] as? String)
        var payload = try #require(try jwsPayload(signedPayload) as? [String: Any])
        var result: [String: Any] = [:]
        for (object, member, name) in [
            ("data", "signedTransactionInfo", "transactionInfo"), ("data", "signedRenewalInfo", "renewalInfo"),
            ("appData", "signedAppTransactionInfo", "appTransaction"),
        ] {
            guard var holder = payload[object] as? [String: Any], let compact = holder[member] as? String else {
                continue
            }
            result[name] = try jwsPayload(compact)
            holder[member] = nil
            payload[object] = holder
        }
        result["payload"] = payload
        return result as NSDictionary
    }

    static func parsed(_ json: [UInt8]) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(json)) as? NSDictionary)
    }

    /// A compact JWS of `payload` with a made-up header and signature (the builder does not verify).
    static func jws(_ payload: String) -> String {
        "\(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8))).\(Base64URL.encode(Array(payload.utf8))).c2ln"
    }

    static func body(payload: String) -> [UInt8] {
        Array(#"{"signedPayload":"\#(jws(payload))"}"#.utf8)
    }

    @Test("every valid V2 fixture: Apple's payload and decoded members exactly, the members the verifier decoded")
    func fixtures() async throws {
        let verifier = try TestVerifiers.fixtures()
        let valid = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }
        try #require(valid.count > 20)
        for fixture in valid {
            let result = await verifier.verify(body: Array(fixture.body.utf8))
            let notification = try #require(result.v2, "\(fixture)")
            let built = try DecodedNotificationJSON.v2(body: Array(fixture.body.utf8))
            #expect(try Self.parsed(built.json) == Self.expected(body: fixture.body), "\(fixture)")
            var decoded: Set<DecodedNotificationJSON.SignedMember> = []
            if notification.transactionInfo != nil { decoded.insert(.transactionInfo) }
            if notification.renewalInfo != nil { decoded.insert(.renewalInfo) }
            if notification.appTransaction != nil { decoded.insert(.appTransaction) }
            #expect(built.decoded == decoded, "\(fixture)")
            #expect(try DecodedNotificationJSON.v2(body: Array(fixture.body.utf8)).json == built.json)
        }
    }

    @Test("fields this version does not model, anywhere, come through with Apple's names and values")
    func unknownFields() async throws {
        let pki = try TestPKI()
        let signer = try JWSSigner(pki: pki)
        let transaction = try signer.sign(
            payloadJSON: Data(
                #"{"bundleId":"com.example.tests","environment":"Sandbox","originalTransactionId":"7","transactionId":"7","signedDate":1780272000000,"futureTransactionField":{"deep":[1,2.5,"é"]}}"#
                    .utf8
            )
        )
        let payload = #"""
            {"notificationType":"SOMETHING_NEW","notificationUUID":"4a1e7e0c-5a55-4cd6-9a43-5c1b0c3d2e1f","version":"2.0","signedDate":1780272000000,"futureTopLevel":true,"data":{"bundleId":"com.example.tests","environment":"Sandbox","signedTransactionInfo":"\#(transaction)","futureDataField":"x","signedFutureInfo":"a.b.c"}}
            """#
        let body = Array(try NotificationSigner.envelope(try signer.sign(payloadJSON: Data(payload.utf8))).utf8)
        let verifier = try TestVerifiers.make(roots: [pki.root])
        #expect(await verifier.verify(body: body).status == "OK")

        let built = try DecodedNotificationJSON.v2(body: body)
        let json = String(decoding: built.json, as: UTF8.self)
        #expect(json.contains(#""futureTopLevel":true"#))
        #expect(json.contains(#""futureDataField":"x""#))
        // A signed member this version does not verify stays as Apple sent it.
        #expect(json.contains(#""signedFutureInfo":"a.b.c""#))
        #expect(json.contains(#""futureTransactionField":{"deep":[1,2.5,"é"]}"#))
        #expect(!json.contains("signedTransactionInfo"))
        #expect(built.decoded == [.transactionInfo])
    }

    @Test("bytes outside the rewritten object are kept as signed, spaces included; the decoded members verbatim")
    func verbatim() throws {
        let transaction = #"{ "transactionId" : "1" }"#
        let payload =
            #" {"notificationType": "DID_RENEW" ,"data": {"a": 1, "signedTransactionInfo": "\#(Self.jws(transaction))", "b": [ 2 ]}, "z": null } "#
        let built = try DecodedNotificationJSON.v2(body: Self.body(payload: payload))
        #expect(
            String(decoding: built.json, as: UTF8.self)
                == #"{"payload":{"notificationType": "DID_RENEW" ,"data": {"a": 1,"b": [ 2 ]}, "z": null },"transactionInfo":{ "transactionId" : "1" }}"#
        )
        // Nothing decoded: the payload as signed.
        let summary = #"{"notificationType":"RENEWAL_EXTENSION","summary":{"requestIdentifier":"r"}}"#
        #expect(
            try DecodedNotificationJSON.v2(body: Self.body(payload: summary)).json
                == Array(#"{"payload":\#(summary)}"#.utf8)
        )
    }

    @Test("escaped names and values are read as a JSON decoder reads them; a null member stays; duplicates refuse")
    func oddButValid() throws {
        let renewal = #"{"autoRenewStatus":1}"#
        let escaped =
            #"{"d\u0061ta":{"signedRenewalInfo":"\#(Self.jws(renewal).replacingOccurrences(of: ".", with: "\\u002e"))","signedTransactionInfo":null}}"#
        let built = try DecodedNotificationJSON.v2(body: Self.body(payload: escaped))
        #expect(built.decoded == [.renewalInfo])
        #expect(
            String(decoding: built.json, as: UTF8.self)
                == #"{"payload":{"d\u0061ta":{"signedTransactionInfo":null}},"renewalInfo":{"autoRenewStatus":1}}"#
        )

        for payload in [
            #"{"data":{},"data":{}}"#,
            #"{"data":{"signedRenewalInfo":"\#(Self.jws("{}"))","signedRenewalInfo":"\#(Self.jws("{}"))"}}"#,
            #"{"data":{"signedRenewalInfo":"not a jws"}}"#,
            "[1]",
        ] {
            #expect(throws: DecodedNotificationJSON.Unbuildable.self, "\(payload)") {
                try DecodedNotificationJSON.v2(body: Self.body(payload: payload))
            }
        }
        #expect(throws: DecodedNotificationJSON.Unbuildable.self) {
            try DecodedNotificationJSON.v2(body: Array(#"{"signedPayload":1}"#.utf8))
        }
    }

    @Test("V1: the stored body itself, without a byte order mark")
    func v1() {
        let body = Array(#"{"notification_type":"DID_RENEW","password":"<redacted>","x":[1]}"#.utf8)
        #expect(DecodedNotificationJSON.v1(storedBody: body) == body)
        #expect(DecodedNotificationJSON.v1(storedBody: [0xEF, 0xBB, 0xBF] + body) == body)
    }
}

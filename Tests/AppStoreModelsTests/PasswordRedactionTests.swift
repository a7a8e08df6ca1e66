import AppStoreModels
import AppStoreTestSupport
import Foundation
import Testing

@Suite("V1 shared-secret redaction", .tags(.fast))
struct PasswordRedactionTests {
    private func redacted(_ body: String) -> String {
        String(decoding: StatusUpdateNotification.redactingPassword(in: Array(body.utf8)), as: UTF8.self)
    }

    @Test("the top-level password value is replaced; every other byte is kept")
    func topLevel() {
        let body = #"{"environment": "Sandbox",  "password" :"s3cret\"x", "notification_type":"DID_RENEW"}"#
        #expect(
            redacted(body) == #"{"environment": "Sandbox",  "password" :"<redacted>", "notification_type":"DID_RENEW"}"#
        )
    }

    @Test("an escaped member name is still the password; repeated members are all redacted")
    func escapedAndRepeated() {
        let body = #"{"pass\u0077ord": "one", "a": {"password": "nested"}, "password": 12}"#
        #expect(
            redacted(body) == #"{"pass\u0077ord": "<redacted>", "a": {"password": "nested"}, "password": "<redacted>"}"#
        )
    }

    @Test("strings ending in escaped backslashes or holding escaped quotes end where a JSON decoder ends them")
    func escapesBeforeQuotes() {
        let body = #"{"a": "x\\", "b": "\"password\": \\\"", "password": "p", "c": "\\\\"}"#
        #expect(redacted(body) == #"{"a": "x\\", "b": "\"password\": \\\"", "password": "<redacted>", "c": "\\\\"}"#)
        let data = try? JSONSerialization.jsonObject(with: Data(redacted(body).utf8)) as? [String: String]
        #expect(data?["password"] == "<redacted>" && data?["a"] == #"x\"#)
    }

    @Test("bodies without a top-level password, or not JSON objects, come back unchanged")
    func unchanged() {
        for body in [#"{"signedPayload": "eyJ.password.x"}"#, "not json", #"["password", "x"]"#, ""] {
            #expect(redacted(body) == body)
        }
    }

    @Test("a body cut short is redacted up to where it stops")
    func truncated() {
        #expect(
            redacted(#"{"password": "abc", "unified_receipt": {"#)
                == #"{"password": "<redacted>", "unified_receipt": {"#
        )
    }

    @Test("a UTF-8 byte order mark, or UTF-16 / UTF-32 text, does not hide the password")
    func otherEncodings() throws {
        let json = #"{"notification_type": "DID_RENEW", "password": "s3cret"}"#
        let withMark = [0xEF, 0xBB, 0xBF] + Array(json.utf8)
        #expect(
            !String(decoding: StatusUpdateNotification.redactingPassword(in: withMark), as: UTF8.self).contains(
                "s3cret"
            )
        )
        for encoding in [String.Encoding.utf16LittleEndian, .utf16BigEndian, .utf32LittleEndian, .utf16] {
            let wide = Array(try #require(json.data(using: encoding)))
            let redacted = StatusUpdateNotification.redactingPassword(in: wide)
            #expect(
                String(decoding: redacted, as: UTF8.self)
                    == #"{"notification_type": "DID_RENEW", "password": "<redacted>"}"#
            )
        }
        // Wide text without a password comes back byte for byte.
        let other = Array(try #require(#"{"a": 1}"#.data(using: .utf16LittleEndian)))
        #expect(StatusUpdateNotification.redactingPassword(in: other) == other)
    }
}

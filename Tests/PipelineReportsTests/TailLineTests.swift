import AppStoreTestSupport
import KafkaClient
import NIOCore
import PipelineContract
import PipelineReports
import Testing

@Suite("asnp tail's lines and filter: one JSON line per event, selected by key and type", .tags(.fast))
struct TailLineTests {
    static func message(key: String?, type: String?, contentType: String?, value: String) -> KafkaMessage {
        var headers: [KafkaHeader] = []
        if let type { headers.append(KafkaHeader(key: OutputEvent.CloudEventsHeader.type, string: type)) }
        if let contentType { headers.append(KafkaHeader(key: OutputEvent.contentTypeHeader, string: contentType)) }
        return KafkaMessage(
            topic: "decoded",
            partition: 2,
            offset: 7,
            key: key.map { ByteBuffer(string: $0) },
            value: ByteBuffer(string: value),
            headers: headers,
            timestamp: nil
        )
    }

    @Test("a JSON value is written inline on one line; anything else as base64")
    func line() {
        let json = Self.message(
            key: "1000",
            type: nil,
            contentType: "application/json",
            value: "{\n\"a\": \"x\\ny\"\n}"
        )
        #expect(
            TailLine(json).json
                == #"{"topic":"decoded","partition":2,"offset":7,"key":"1000","headers":{"content-type":"#
                + #""application/json"},"value":{ "a": "x\ny" }}"#
        )
        let text = Self.message(key: nil, type: nil, contentType: "text/plain", value: "hi")
        #expect(
            TailLine(text).json.hasSuffix(#""key":null,"headers":{"content-type":"text/plain"},"valueBase64":"aGk="}"#)
        )
    }

    @Test("keys match exactly; a type matches whole or as the last dotted part")
    func filter() {
        let event = Self.message(key: "1000", type: "com.example.DID_RENEW", contentType: nil, value: "")
        #expect(TailFilter(keys: [], types: []).accepts(event))
        #expect(TailFilter(keys: ["1000"], types: ["DID_RENEW"]).accepts(event))
        #expect(TailFilter(keys: [], types: ["com.example.DID_RENEW"]).accepts(event))
        #expect(!TailFilter(keys: ["100"], types: []).accepts(event))
        #expect(!TailFilter(keys: [], types: ["RENEW"]).accepts(event))
    }
}

import CommandSupport
import Foundation
import KafkaClient
import NIOCore
import PipelineContract

/// One line of `asnp tail`: `{"topic", "partition", "offset", "key", "headers", "value" | "valueBase64"}`.
package struct TailLine {
    package let message: KafkaMessage

    package init(_ message: KafkaMessage) {
        self.message = message
    }

    package var json: String {
        var line = OrderedJSONObject()
        line.append("topic", .string(message.topic))
        line.append("partition", .int(Int64(message.partition)))
        line.append("offset", .int(message.offset))
        line.append("key", .optionalString(message.key.map { String(buffer: $0) }))
        var headers = OrderedJSONObject()
        for header in message.headers {
            headers.append(header.key, .optionalString(header.stringValue))
        }
        line.append("headers", .raw(headers.serialized))
        let value = Array(message.value.readableBytesView)
        if message.headers.first(named: OutputEvent.contentTypeHeader) == "application/json", OutputEvent.isJSON(value)
        {
            line.append("value", .raw(Self.oneLine(value)))
        } else {
            line.append("valueBase64", .string(Data(value).base64EncodedString()))
        }
        return line.serialized
    }

    /// JSON text on one line: a line break in valid JSON can only be whitespace between tokens (strings hold them
    /// escaped), so it becomes a space and the value stays the same.
    package static func oneLine(_ json: [UInt8]) -> String {
        String(decoding: json.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self)
    }
}

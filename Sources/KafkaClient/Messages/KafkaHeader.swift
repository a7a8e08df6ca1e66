import NIOCore

/// A Kafka record header: a key and an optional binary value.
package struct KafkaHeader: Sendable, Hashable {
    /// The header key.
    package var key: String
    /// The header value; nil for a header without one (distinct from an empty value).
    package var value: ByteBuffer?

    /// A header with a binary value, or none.
    package init(key: String, value: ByteBuffer?) {
        self.key = key
        self.value = value
    }

    /// A header with a UTF-8 string value.
    package init(key: String, string: String) {
        self.init(key: key, value: ByteBuffer(string: string))
    }

    /// The value as UTF-8 text, if it has one.
    package var stringValue: String? { value.map { String(buffer: $0) } }
}

extension Array where Element == KafkaHeader {
    /// The value of the first header with this key, as UTF-8 text.
    package func first(named key: String) -> String? {
        first(where: { $0.key == key })?.stringValue
    }
}

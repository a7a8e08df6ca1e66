import Foundation
import KafkaClient
import NIOCore

/// The messages `asnp-bench kafka` sends: keyed, with values of printable pseudo-random bytes (base64-like, as the
/// pipeline's JWS bodies are), so compression has realistic work.
struct KafkaBenchWorkload: Sendable {
    let messages: Int
    let keys: Int
    /// Distinct values, cycled: more than fit in lz4's 64 KB window, so no value repeats within it.
    private let values: [ByteBuffer]

    init(messages: Int, messageSize: Int, keys: Int) {
        self.messages = messages
        self.keys = keys
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var generator = SystemRandomNumberGenerator()
        values = (0..<1_000).map { _ in
            ByteBuffer(
                bytes: (0..<messageSize).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            )
        }
    }

    func key(_ index: Int) -> String { "subscription-\(index % keys)" }

    func message(topic: String, index: Int) -> KafkaProducerMessage {
        KafkaProducerMessage(topic: topic, key: key(index), value: values[index % values.count])
    }

    /// The same messages as `kcat -P -K '\t'` input: one `key<TAB>value` line each.
    func kcatInput() -> Data {
        var data = Data()
        data.reserveCapacity(messages * (values[0].readableBytes + 24))
        for index in 0..<messages {
            data.append(contentsOf: key(index).utf8)
            data.append(UInt8(ascii: "\t"))
            data.append(contentsOf: values[index % values.count].readableBytesView)
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}

/// librdkafka writes error texts into caller-provided C buffers; these helpers own such a buffer for one call.
enum RDKafkaErrorText {
    /// The buffer size librdkafka's own examples use; its messages are far shorter.
    static let capacity = 512

    /// Runs `body` with a zeroed buffer and returns its result with the text librdkafka wrote (empty if none).
    static func with<T>(_ body: (UnsafeMutablePointer<CChar>, Int) -> T) -> (T, String) {
        var buffer = [CChar](repeating: 0, count: capacity)
        let result = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return (result, String(decoding: bytes, as: UTF8.self))
    }
}

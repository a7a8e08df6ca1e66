/// Strict base64url decoding (RFC 4648 §5, no padding) of JWS segments, straight from the string's bytes: no
/// alphabet translation, padding or intermediate copies on the hot path; and the encoding that signers use.
package enum Base64URL {
    /// `bytes` in base64url without padding.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: encodedBytes(bytes), as: UTF8.self)
    }

    /// `bytes` in base64url without padding, as ASCII bytes: three input bytes at a time into a buffer sized once
    /// (the packed-body store rebuilds 7 KB payloads with it on every read).
    package static func encodedBytes(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encodedBytes(contiguous: $0) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBufferPointer { encodedBytes(contiguous: $0) }
    }

    private static func encodedBytes(contiguous input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let count = input.count
        let outputCount = count / 3 * 4 + [0, 2, 3][count % 3]
        return [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
            alphabet.withUnsafeBufferPointer { alphabet in
                var out = 0
                var index = 0
                while index + 3 <= count {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[out] = alphabet[Int(group >> 18)]
                    output[out + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    output[out + 2] = alphabet[Int(group >> 6 & 0x3F)]
                    output[out + 3] = alphabet[Int(group & 0x3F)]
                    out += 4
                    index += 3
                }
                switch count - index {
                case 1:
                    let group = UInt32(input[index]) << 16
                    output[out] = alphabet[Int(group >> 18)]
                    output[out + 1] = alphabet[Int(group >> 12 & 0x3F)]
                case 2:
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                    output[out] = alphabet[Int(group >> 18)]
                    output[out + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    output[out + 2] = alphabet[Int(group >> 6 & 0x3F)]
                default:
                    break
                }
            }
            initialized = outputCount
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 6-bit values by ASCII code; 0x80 marks a byte outside the alphabet.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0x80, count: 256)
        for (index, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()

    private struct Invalid: Error {}

    /// Decodes `input`, or returns nil for a byte outside the alphabet (padding included), an impossible length,
    /// or non-zero leftover bits (so each byte string has exactly one accepted encoding).
    package static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        let outputCount = count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        return table.withUnsafeBufferPointer { table in
            try? [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
                var inputIndex = 0
                var outputIndex = 0
                while inputIndex + 4 <= count {
                    let a = table[Int(input[inputIndex])]
                    let b = table[Int(input[inputIndex + 1])]
                    let c = table[Int(input[inputIndex + 2])]
                    let d = table[Int(input[inputIndex + 3])]
                    guard (a | b | c | d) & 0x80 == 0 else { throw Invalid() }
                    output[outputIndex] = a << 2 | b >> 4
                    output[outputIndex + 1] = b << 4 | c >> 2
                    output[outputIndex + 2] = c << 6 | d
                    inputIndex += 4
                    outputIndex += 3
                }
                if remainder >= 2 {
                    let a = table[Int(input[inputIndex])]
                    let b = table[Int(input[inputIndex + 1])]
                    guard (a | b) & 0x80 == 0 else { throw Invalid() }
                    output[outputIndex] = a << 2 | b >> 4
                    if remainder == 3 {
                        let c = table[Int(input[inputIndex + 2])]
                        guard c & 0x80 == 0, c & 0x03 == 0 else { throw Invalid() }
                        output[outputIndex + 1] = b << 4 | c >> 2
                    } else {
                        guard b & 0x0F == 0 else { throw Invalid() }
                    }
                }
                initialized = outputCount
            }
        }
    }

    /// Decodes the bytes of `text`.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0) }
    }
}

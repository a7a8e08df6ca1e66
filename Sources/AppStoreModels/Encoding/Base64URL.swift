/// Strict base64url decoding (RFC 4648 §5, no padding) of JWS segments, straight from the string's bytes: no
/// alphabet translation, padding or intermediate copies on the hot path; and the encoding that signers use.
package enum Base64URL {
    /// `bytes` in base64url without padding.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// 6-bit values by ASCII code; 0x80 marks a byte outside the alphabet.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0x80, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
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

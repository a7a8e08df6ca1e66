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
        let outputCount = encodedCount(input.count)
        return [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
            if let target = output.baseAddress { encode(input, into: UnsafeMutableRawPointer(target)) }
            initialized = outputCount
        }
    }

    /// Whether `text` is exactly `bytes` in base64url without padding; compared as it is encoded, with no copy.
    package static func isEncoding(of bytes: UnsafeBufferPointer<UInt8>, _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        guard text.count == encodedCount(count) else { return false }
        guard let source = bytes.baseAddress, let expected = text.baseAddress else { return true }
        let target = UnsafeRawPointer(expected)
        return characterPairs.withUnsafeBufferPointer { pairs in
            var out = 0
            var index = 0
            while index + 3 <= count {
                let group = Int(source[index]) << 16 | Int(source[index + 1]) << 8 | Int(source[index + 2])
                let characters = UInt32(pairs[group >> 12]) | UInt32(pairs[group & 0xFFF]) << 16
                guard target.loadUnaligned(fromByteOffset: out, as: UInt32.self) == characters.littleEndian else {
                    return false
                }
                out += 4
                index += 3
            }
            switch count - index {
            case 1:
                let group = Int(source[index]) << 4
                return target.loadUnaligned(fromByteOffset: out, as: UInt16.self) == pairs[group].littleEndian
            case 2:
                let group = Int(source[index]) << 10 | Int(source[index + 1]) << 2
                return target.loadUnaligned(fromByteOffset: out, as: UInt16.self) == pairs[group >> 6].littleEndian
                    && expected[out + 2] == alphabet[group & 0x3F]
            default:
                return true
            }
        }
    }

    /// The length of `count` bytes in base64url without padding.
    package static func encodedCount(_ count: Int) -> Int {
        count / 3 * 4 + [0, 2, 3][count % 3]
    }

    /// Writes `input` in base64url to `target`, which has room for ``encodedCount(_:)`` bytes.
    private static func encode(_ input: UnsafeBufferPointer<UInt8>, into target: UnsafeMutableRawPointer) {
        let count = input.count
        guard let source = input.baseAddress else { return }
        characterPairs.withUnsafeBufferPointer { pairs in
            var out = 0
            var index = 0
            // Three bytes, 24 bits, are two 12-bit halves: a pair of characters each, one 4-byte store.
            while index + 3 <= count {
                let group = Int(source[index]) << 16 | Int(source[index + 1]) << 8 | Int(source[index + 2])
                let characters = UInt32(pairs[group >> 12]) | UInt32(pairs[group & 0xFFF]) << 16
                target.storeBytes(of: characters.littleEndian, toByteOffset: out, as: UInt32.self)
                out += 4
                index += 3
            }
            switch count - index {
            case 1:
                let group = Int(source[index]) << 4
                target.storeBytes(of: pairs[group].littleEndian, toByteOffset: out, as: UInt16.self)
            case 2:
                let group = Int(source[index]) << 10 | Int(source[index + 1]) << 2
                target.storeBytes(of: pairs[group >> 6].littleEndian, toByteOffset: out, as: UInt16.self)
                target.storeBytes(of: alphabet[group & 0x3F], toByteOffset: out + 2, as: UInt8.self)
            default:
                break
            }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The two characters of each 12-bit value, the first in the low byte (so a little-endian store writes them in
    /// order).
    private static let characterPairs: [UInt16] = (0..<4096).map {
        UInt16(alphabet[$0 >> 6]) | UInt16(alphabet[$0 & 0x3F]) << 8
    }

    /// Four tables of 256 entries, one per position in a group of four characters: each character's 6 bits already
    /// in their places among the group's three bytes (laid out so that a little-endian store writes them in order),
    /// or ``invalid`` for a byte outside the alphabet. A group decodes as the OR of four lookups.
    private static let decodingTables: [UInt32] = {
        var tables = [UInt32](repeating: invalid, count: 1024)
        for (index, character) in alphabet.enumerated() {
            let value = UInt32(index)
            tables[Int(character)] = value << 2
            tables[256 + Int(character)] = value >> 4 | (value & 0x0F) << 12
            tables[512 + Int(character)] = (value >> 2) << 8 | (value & 0x03) << 22
            tables[768 + Int(character)] = value << 16
        }
        return tables
    }()

    /// Above the 24 bits of a group: set in the OR of a group's lookups when any character is not in the alphabet.
    private static let invalid: UInt32 = 0x0100_0000

    private struct Invalid: Error {}

    /// Decodes `input`, or returns nil for a byte outside the alphabet (padding included), an impossible length,
    /// or non-zero leftover bits (so each byte string has exactly one accepted encoding).
    package static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        guard let source = input.baseAddress else { return [] }
        let outputCount = count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        return decodingTables.withUnsafeBufferPointer { tables in
            // One spare byte: each group is written with a 4-byte store, the last one included.
            try? [UInt8](unsafeUninitializedCapacity: outputCount + 1) { output, initialized in
                let target = UnsafeMutableRawPointer(output.baseAddress!)
                func group(_ at: Int, _ characters: Int) -> UInt32 {
                    var word: UInt32 = 0
                    for position in 0..<characters { word |= tables[position << 8 | Int(source[at + position])] }
                    return word
                }
                var inputIndex = 0
                var outputIndex = 0
                while inputIndex + 4 <= count {
                    let word =
                        tables[Int(source[inputIndex])] | tables[256 | Int(source[inputIndex + 1])]
                        | tables[512 | Int(source[inputIndex + 2])] | tables[768 | Int(source[inputIndex + 3])]
                    guard word & invalid == 0 else { throw Invalid() }
                    target.storeBytes(of: word.littleEndian, toByteOffset: outputIndex, as: UInt32.self)
                    inputIndex += 4
                    outputIndex += 3
                }
                if remainder >= 2 {
                    // The bits after the last whole byte (the byte the group would have next) must be zero.
                    let word = group(inputIndex, remainder)
                    guard word & invalid == 0, word >> (8 * (remainder - 1)) & 0xFF == 0 else { throw Invalid() }
                    output[outputIndex] = UInt8(truncatingIfNeeded: word)
                    if remainder == 3 { output[outputIndex + 1] = UInt8(truncatingIfNeeded: word >> 8) }
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

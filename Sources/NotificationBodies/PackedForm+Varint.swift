extension PackedForm {
    /// Appends lengths as unsigned LEB128 and byte strings after their length.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func append(varint value: Int) {
            var value = UInt(value)
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func append(length run: ArraySlice<UInt8>) {
            append(varint: run.count)
            bytes += run
        }
    }

    /// Reads what ``Writer`` wrote, throwing at the first length or digest the bytes cannot hold.
    struct Reader {
        private var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
        }

        var remaining: Int { bytes.count }

        mutating func varint() throws(PackedBodyError) -> Int {
            var value = 0
            var shift = 0
            while let byte = bytes.popFirst() {
                // No stored length comes near 2^56: a longer varint is damage, not data.
                guard shift < 56 else { throw PackedBodyError(code: .malformed, reason: "a length is too large") }
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw PackedBodyError(code: .truncated, reason: "the form ends inside a length")
        }

        mutating func lengthPrefixed() throws(PackedBodyError) -> ArraySlice<UInt8> {
            try take(varint(), what: "a run of bytes")
        }

        mutating func digest() throws(PackedBodyError) -> JWSHeaderDigest {
            guard let digest = JWSHeaderDigest(bytes: try take(JWSHeaderDigest.byteCount, what: "a header digest"))
            else { throw PackedBodyError(code: .truncated, reason: "the form ends inside a header digest") }
            return digest
        }

        private mutating func take(_ count: Int, what: String) throws(PackedBodyError) -> ArraySlice<UInt8> {
            guard count <= bytes.count else {
                throw PackedBodyError(code: .truncated, reason: "the form ends inside \(what) of \(count) bytes")
            }
            defer { bytes.removeFirst(count) }
            return bytes.prefix(count)
        }
    }
}

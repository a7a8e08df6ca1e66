/// Where the three segments of a compact JWS (`header.payload.signature`) lie in its bytes: found by scanning for
/// the two dots in place, because splitting the string into substrings costs more than the decoding that follows.
package struct CompactJWSSegments: Sendable, Equatable {
    package var header: Range<Int>
    package var payload: Range<Int>
    package var signature: Range<Int>

    /// The segments of `bytes`, or nil unless it has exactly two dots.
    package init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        let dot = UInt8(ascii: ".")
        guard let first = bytes.firstIndex(of: dot),
            let second = bytes[(first + 1)...].firstIndex(of: dot),
            !bytes[(second + 1)...].contains(dot)
        else { return nil }
        header = 0..<first
        payload = (first + 1)..<second
        signature = (second + 1)..<bytes.count
    }
}

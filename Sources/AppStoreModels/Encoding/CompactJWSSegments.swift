#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the three segments of a compact JWS (`header.payload.signature`) lie in its bytes: found by scanning for
/// the two dots in place, because splitting the string into substrings costs more than the decoding that follows.
package struct CompactJWSSegments: Sendable, Equatable {
    package var header: Range<Int>
    package var payload: Range<Int>
    package var signature: Range<Int>

    /// The segments of `bytes`, or nil unless it has exactly two dots.
    package init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        // memchr: the C library's vectorized search, several times faster than a byte loop over a 15 KB body.
        func dot(from start: Int) -> Int? {
            guard let base = bytes.baseAddress, start < bytes.count,
                let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard let first = dot(from: 0), let second = dot(from: first + 1), dot(from: second + 1) == nil else {
            return nil
        }
        header = 0..<first
        payload = (first + 1)..<second
        signature = (second + 1)..<bytes.count
    }
}

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UnsafeBufferPointer<UInt8> {
    /// Whether `other` holds the same bytes, compared with memcmp: `==` on byte arrays goes element by element
    /// through `Equatable` (a profile of the packer showed it at a tenth of building a row).
    func hasSameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count == other.count else { return false }
        guard let mine = baseAddress, let theirs = other.baseAddress else { return true }
        return memcmp(mine, theirs, count) == 0
    }
}

extension ArraySlice<UInt8> {
    /// Whether `other` holds the same bytes (``Swift/UnsafeBufferPointer/hasSameBytes(as:)``).
    func hasSameBytes(as other: ArraySlice<UInt8>) -> Bool {
        withUnsafeBufferPointer { mine in other.withUnsafeBufferPointer { mine.hasSameBytes(as: $0) } }
    }
}

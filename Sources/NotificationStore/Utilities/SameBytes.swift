#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ArraySlice<UInt8> {
    /// Whether `other` holds the same bytes, compared with memcmp: `==` on byte arrays goes element by element
    /// through `Equatable` (a profile of the packer showed it at a tenth of building a row).
    func hasSameBytes(as other: ArraySlice<UInt8>) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBufferPointer { mine in
            other.withUnsafeBufferPointer { theirs in
                guard let mine = mine.baseAddress, let theirs = theirs.baseAddress else { return true }
                return memcmp(mine, theirs, count) == 0
            }
        }
    }
}

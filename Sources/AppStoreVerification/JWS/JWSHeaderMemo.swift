import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The decoded headers of recent JWS, by the exact text of their header segment.
///
/// Every JWS the App Store signs with one leaf carries the same header (`alg` and the three-certificate `x5c`,
/// about 4 KB of base64url), and a notification holds three of them. Comparing those bytes with a remembered
/// header costs a fraction of decoding them again (base64, JSON, three certificate strings). Decoding is a pure
/// function of the bytes, so a remembered header is exactly what decoding would give: the memo changes no outcome.
///
/// Bounded: a few headers of at most ``maximumHeaderSize`` bytes each, the oldest replaced first, so a flood of
/// forged headers costs memory for none but the last few.
final class JWSHeaderMemo: Sendable {
    /// Headers held at once. Apple signs with one leaf at a time (two while it rotates, per environment).
    static let capacity = 8
    /// Longer header segments are decoded every time, not remembered.
    static let maximumHeaderSize = 16 * 1024

    private struct Entry {
        var segment: [UInt8]
        var header: JWSHeader
    }

    private struct State {
        var entries: [Entry] = []
        /// Where the next new header goes once the memo is full.
        var nextSlot = 0
    }

    private let state = Mutex(State())

    init() {}

    /// The header remembered for exactly these segment bytes.
    func header(for segment: UnsafeBufferPointer<UInt8>) -> JWSHeader? {
        state.withLock { state in
            state.entries.first { Self.equal($0.segment, segment) }?.header
        }
    }

    private static func equal(_ remembered: [UInt8], _ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        guard remembered.count == segment.count else { return false }
        guard let base = segment.baseAddress else { return true }
        return remembered.withUnsafeBytes { memcmp($0.baseAddress!, base, segment.count) == 0 }
    }

    /// Remembers `header` as the decoding of `segment`.
    func remember(_ header: JWSHeader, for segment: UnsafeBufferPointer<UInt8>) {
        guard segment.count <= Self.maximumHeaderSize else { return }
        let entry = Entry(segment: Array(segment), header: header)
        state.withLock { state in
            if state.entries.count < Self.capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.nextSlot] = entry
                state.nextSlot = (state.nextSlot + 1) % Self.capacity
            }
        }
    }
}

import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Values worked out from recent JWS header segments, by the segment's exact text: the verifier's decoded headers,
/// the store's header digests.
///
/// Every JWS the App Store signs with one leaf carries the same header (`alg` and the three-certificate `x5c`,
/// about 4 KB of base64url), and a notification holds three of them. Comparing those bytes with a remembered
/// segment costs a fraction of working the value out again (decoding base64, JSON and certificates; hashing). The
/// value must be a pure function of the bytes, so that a remembered one is exactly what working it out would give:
/// the memo then changes no outcome.
///
/// Bounded: a few segments of at most ``maximumSegmentSize`` bytes each, the oldest replaced first, so a flood of
/// forged headers costs memory for none but the last few.
package final class JWSHeaderSegmentMemo<Value: Sendable>: Sendable {
    /// Segments held at once. Apple signs with one leaf at a time (two while it rotates, per environment).
    package static var capacity: Int { 8 }
    /// Longer segments are worked out every time, not remembered.
    package static var maximumSegmentSize: Int { 16 * 1024 }

    private struct Entry {
        var segment: [UInt8]
        var value: Value
    }

    private struct State {
        var entries: [Entry] = []
        /// Where the next new segment goes once the memo is full.
        var nextSlot = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// The value remembered for exactly these segment bytes.
    package func value(for segment: UnsafeBufferPointer<UInt8>) -> Value? {
        state.withLock { state in
            state.entries.first { Self.equal($0.segment, segment) }?.value
        }
    }

    private static func equal(_ remembered: [UInt8], _ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        guard remembered.count == segment.count else { return false }
        guard let base = segment.baseAddress else { return true }
        return remembered.withUnsafeBytes { memcmp($0.baseAddress!, base, segment.count) == 0 }
    }

    /// Remembers `value` as worked out from `segment`.
    package func remember(_ value: Value, for segment: UnsafeBufferPointer<UInt8>) {
        guard segment.count <= Self.maximumSegmentSize else { return }
        let entry = Entry(segment: Array(segment), value: value)
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

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Request ids: random (version 4) UUIDs in lowercase, as `UUID().uuidString.lowercased()` writes them.
///
/// Made here from system randomness read 4 KiB at a time: `UUID()` costs a system call each, and with its two string
/// conversions it took ~4% of the ingress's CPU.
enum RequestIdentifiers {
    private static let pool = Mutex(RandomPool())

    /// A fresh id, such as `9b2f0c1e-6a4d-4f3b-8e1a-2c5d7f9a0b3c`.
    static func next() -> String {
        var (high, low) = pool.withLock { $0.next() }
        // The version (4) and variant (10) bits of RFC 9562.
        high = high & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_4000
        low = low & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return String(unsafeUninitializedCapacity: 36) { text in
            let digits: StaticString = "0123456789abcdef"
            var position = 0
            func put(_ value: UInt64, nibbles: Int, from start: Int) {
                for nibble in (start - nibbles..<start).reversed() {
                    text[position] = digits.utf8Start[Int(value >> UInt64(nibble * 4) & 0xF)]
                    position += 1
                }
            }
            // 8-4-4-4-12 hex digits: the high word's 16, then the low word's 16.
            let groups = [(high, 8, 16), (high, 4, 8), (high, 4, 4), (low, 4, 16), (low, 12, 12)]
            for (index, (value, nibbles, start)) in groups.enumerated() {
                if index > 0 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                put(value, nibbles: nibbles, from: start)
            }
            return position
        }
    }
}

/// Random words from `/dev/urandom`, read a buffer at a time; `SystemRandomNumberGenerator` if it cannot be read.
private struct RandomPool {
    private var words = [UInt64](repeating: 0, count: 512)
    private var index = 512

    mutating func next() -> (UInt64, UInt64) {
        if index + 2 > words.count {
            refill()
            index = 0
        }
        defer { index += 2 }
        return (words[index], words[index + 1])
    }

    private mutating func refill() {
        let filled = words.withUnsafeMutableBytes { buffer -> Bool in
            let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var offset = 0
            while offset < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count > 0 {
                    offset += count
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
        if !filled {
            var generator = SystemRandomNumberGenerator()
            for index in words.indices { words[index] = generator.next() }
        }
    }
}

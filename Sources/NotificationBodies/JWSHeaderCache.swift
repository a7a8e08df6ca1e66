import Synchronization

/// The JWS headers packed bodies refer to, by digest, for reads that rebuild bodies (the outbox, replays).
/// Content-addressed: an entry never goes stale. Apple's few signing chains make it a handful of entries of about
/// 4 KB, but older rejected bodies (packed before they were kept whole) refer to whatever headers their senders
/// forged: so the cache holds at most ``budget`` bytes of headers, the least recently used leaving first, and a
/// header larger than a tenth of the budget is never kept.
package final class JWSHeaderCache: Sendable {
    /// The most header bytes held.
    package let budget: Int

    private struct Entry {
        var header: [UInt8]
        var previous: JWSHeaderDigest?
        var next: JWSHeaderDigest?
    }

    /// Entries in a doubly linked list, most recently used first, over a dictionary: every operation in constant time.
    private struct State {
        var entries: [JWSHeaderDigest: Entry] = [:]
        var newest: JWSHeaderDigest?
        var oldest: JWSHeaderDigest?
        var bytes = 0

        mutating func unlink(_ digest: JWSHeaderDigest) -> Entry? {
            guard let entry = entries.removeValue(forKey: digest) else { return nil }
            if let previous = entry.previous { entries[previous]?.next = entry.next } else { newest = entry.next }
            if let next = entry.next { entries[next]?.previous = entry.previous } else { oldest = entry.previous }
            bytes -= entry.header.count
            return entry
        }

        mutating func insertNewest(_ digest: JWSHeaderDigest, _ header: [UInt8]) {
            entries[digest] = Entry(header: header, previous: nil, next: newest)
            if let newest { entries[newest]?.previous = digest } else { oldest = digest }
            newest = digest
            bytes += header.count
        }
    }

    private let state = Mutex(State())

    /// A cache of at most `budget` bytes of headers (4 MiB: a thousand of Apple's).
    package init(budget: Int = 4 << 20) {
        self.budget = budget
    }

    /// The bytes held now.
    package var bytes: Int { state.withLock(\.bytes) }

    /// How many headers are held now.
    package var count: Int { state.withLock(\.entries.count) }

    /// The header with `digest`, if held (it becomes the most recently used); setting one holds it, unless it is
    /// larger than a tenth of the budget, and lets the least recently used go until the budget holds.
    package subscript(digest: JWSHeaderDigest) -> [UInt8]? {
        get {
            state.withLock { state in
                guard let entry = state.unlink(digest) else { return nil }
                state.insertNewest(digest, entry.header)
                return entry.header
            }
        }
        set {
            state.withLock { state in
                _ = state.unlink(digest)
                guard let newValue, newValue.count <= budget / 10 else { return }
                state.insertNewest(digest, newValue)
                while state.bytes > budget, let oldest = state.oldest {
                    _ = state.unlink(oldest)
                }
            }
        }
    }
}

import Crypto
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Chains that already verified, so each distinct chain pays for its P-384 checks once rather than once per JWS.
///
/// Keyed by the exact `x5c` text of the leaf and intermediate. An entry keeps the leaf's signing key and the window
/// in which every certificate of the chain is valid, so the validity at each JWS's own signed date is still checked
/// on every use. Bounded: when full, the oldest entry goes.
final class VerifiedChainCache: Sendable {
    struct Key: Hashable {
        var leaf: String
        var intermediate: String
    }

    struct Entry {
        var signingKey: P256.Signing.PublicKey
        /// The latest notValidBefore and earliest notValidAfter across the verified chain.
        var validity: ClosedRange<Date>
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Insertion order, for eviction.
        var order: [Key] = []
        var hits = 0
        var misses = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        precondition(capacity > 0, "the chain cache needs room for at least one chain")
        self.capacity = capacity
    }

    /// The signing key of a chain verified earlier whose certificates are all valid at `date`.
    func signingKey(for key: Key, at date: Date) -> P256.Signing.PublicKey? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.validity.contains(date) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            return entry.signingKey
        }
    }

    func insert(_ entry: Entry, for key: Key) {
        state.withLock { state in
            if state.entries.updateValue(entry, forKey: key) == nil {
                state.order.append(key)
            }
            if state.order.count > capacity {
                state.entries[state.order.removeFirst()] = nil
            }
        }
    }

    /// Lookup counters since creation: how often a chain verification was avoided.
    var statistics: ChainCacheStatistics {
        state.withLock { ChainCacheStatistics(entries: $0.entries.count, hits: $0.hits, misses: $0.misses) }
    }
}

/// How well the verified-chain cache is working.
package struct ChainCacheStatistics: Sendable, Hashable {
    /// Chains held now.
    package var entries: Int
    /// Lookups answered from the cache.
    package var hits: Int
    /// Lookups that needed a full chain verification.
    package var misses: Int

    /// Creates statistics; all zero by default.
    package init(entries: Int = 0, hits: Int = 0, misses: Int = 0) {
        self.entries = entries
        self.hits = hits
        self.misses = misses
    }
}

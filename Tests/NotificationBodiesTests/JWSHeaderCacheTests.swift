import AppStoreTestSupport
import NotificationBodies
import Testing

/// The reads' cache of JWS headers: bounded by bytes, the least recently used leaving first.
@Suite("JWSHeaderCache: at most its budget of bytes, least recently used first out", .tags(.fast))
struct JWSHeaderCacheTests {
    static func digest(_ value: UInt8) -> JWSHeaderDigest {
        JWSHeaderDigest(bytes: [UInt8](repeating: value, count: JWSHeaderDigest.byteCount))!
    }

    @Test("a flood of unique headers leaves at most the budget held, and the headers used lately among them")
    func boundedLeastRecentlyUsed() {
        let cache = JWSHeaderCache(budget: 10_000)
        cache[Self.digest(0)] = [UInt8](repeating: 65, count: 900)
        for value in 1...200 {
            cache[Self.digest(UInt8(value))] = [UInt8](repeating: 66, count: 900)
            // Used between arrivals: the header of every body, as Apple's is.
            #expect(cache[Self.digest(0)]?.count == 900)
            #expect(cache.bytes <= cache.budget)
        }
        #expect(cache.count == 10_000 / 900)
        #expect(cache[Self.digest(200)] != nil)
        #expect(cache[Self.digest(1)] == nil, "the least recently used went first")
    }

    @Test("a header larger than a tenth of the budget is never held; setting nil lets one go")
    func largeHeadersNotHeld() {
        let cache = JWSHeaderCache(budget: 10_000)
        cache[Self.digest(1)] = [UInt8](repeating: 65, count: 1_001)
        #expect(cache[Self.digest(1)] == nil)
        #expect(cache.bytes == 0)
        cache[Self.digest(2)] = [UInt8](repeating: 65, count: 1_000)
        #expect(cache.bytes == 1_000)
        cache[Self.digest(2)] = nil
        #expect(cache.bytes == 0 && cache.count == 0)
    }
}

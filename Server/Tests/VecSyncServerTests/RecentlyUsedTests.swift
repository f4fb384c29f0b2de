import Testing

@testable import VecSyncServer

/// The bounded map behind the per-address limiter and the known tokens: it never holds more
/// than its capacity, forgets the key used longest ago, and a key used again is young again.
@Suite("Recently used keys")
struct RecentlyUsedTests {
    @Test func holdsAtMostItsCapacityAndForgetsTheOldestUse() {
        var map = RecentlyUsed<Int>(capacity: 3)
        for (index, key) in ["a", "b", "c"].enumerated() { map.set(key, index) }
        map.set("a", 10)  // "a" is young again: "b" is now the oldest
        map.set("d", 3)
        #expect(map.count == 3)
        #expect(map.peek("b") == nil)
        #expect(map.peek("a") == 10 && map.peek("c") == 2 && map.peek("d") == 3)
    }

    @Test func aFloodOfNewKeysKeepsTheBoundAndTheKeysInUse() {
        var map = RecentlyUsed<Int>(capacity: 1000)
        for index in 0..<200_000 {
            map.set("flood-\(index)", index)
            // A device that keeps coming back is never forgotten.
            if index % 100 == 0 { map.set("device", index) }
        }
        #expect(map.count == 1000)
        #expect(map.peek("device") != nil)
        #expect(map.peek("flood-199999") == 199_999)
        #expect(map.peek("flood-0") == nil)
    }

    @Test func theLimiterForgetsAddressesBeyondItsCapacity() async {
        let limiter = RateLimiter(capacity: 2)
        #expect(await limiter.allow("x", perSecond: 0.001, burst: 1))
        #expect(await !limiter.allow("x", perSecond: 0.001, burst: 1))
        _ = await limiter.allow("y", perSecond: 0.001, burst: 1)
        _ = await limiter.allow("z", perSecond: 0.001, burst: 1)
        // "x" was forgotten: it starts again with a full bucket.
        #expect(await limiter.allow("x", perSecond: 0.001, burst: 1))
    }
}

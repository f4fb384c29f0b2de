/// A token bucket per key (a token's id) kept in memory: `burst` requests at once, refilled
/// at `perSecond`. ``SQLiteServerStore`` counts with it, one limiter per store object; the
/// PostgreSQL store keeps the same buckets in the database instead, shared by instances.
actor RateLimiter {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private var buckets: [String: Bucket] = [:]
    private let clock = ContinuousClock()

    /// Takes one request from `key`'s bucket; false when it is empty. A rate of 0 or less
    /// allows everything.
    func allow(_ key: String, perSecond: Double, burst: Int) -> Bool {
        guard perSecond > 0 else { return true }
        let capacity = Double(max(1, burst))
        let now = clock.now
        var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
        let elapsed = bucket.updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        bucket.tokens = min(capacity, bucket.tokens + seconds * perSecond)
        bucket.updated = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        buckets[key] = bucket
        if buckets.count > 100_000 { buckets = buckets.filter { $0.value.tokens < capacity } }
        return allowed
    }
}

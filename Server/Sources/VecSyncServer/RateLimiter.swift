/// A token bucket per key kept in memory: `burst` requests at once, refilled at `perSecond`.
/// ``SQLiteServerStore`` counts each token's requests with it, one limiter per store object
/// (the PostgreSQL store keeps those buckets in the database instead, shared by instances);
/// ``SyncServer`` counts each client address's requests without a valid token with one of
/// its own, per process.
actor RateLimiter {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// The buckets of the keys used most recently: a key forgotten had a full bucket or
    /// waited longest, and starts again full.
    private var buckets: RecentlyUsed<Bucket>
    private let clock = ContinuousClock()

    /// A limiter that remembers at most `capacity` keys.
    init(capacity: Int = 100_000) {
        buckets = RecentlyUsed(capacity: capacity)
    }

    /// Takes one request from `key`'s bucket; false when it is empty. A rate of 0 or less
    /// allows everything.
    func allow(_ key: String, perSecond: Double, burst: Int) -> Bool {
        guard perSecond > 0 else { return true }
        var bucket = refilled(key, perSecond: perSecond, burst: burst)
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        buckets.set(key, bucket)
        return allowed
    }

    /// Whole seconds until `key`'s bucket holds a request again, taking nothing: 0 when it
    /// holds one now (or the rate is 0 or less).
    func wait(_ key: String, perSecond: Double, burst: Int) -> Int {
        guard perSecond > 0 else { return 0 }
        let bucket = refilled(key, perSecond: perSecond, burst: burst)
        buckets.set(key, bucket)
        guard bucket.tokens < 1 else { return 0 }
        return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
    }

    /// `key`'s bucket as it is now: full when new, refilled for the time since its last use.
    private func refilled(_ key: String, perSecond: Double, burst: Int) -> Bucket {
        let capacity = Double(max(1, burst))
        let now = clock.now
        var bucket = buckets.peek(key) ?? Bucket(tokens: capacity, updated: now)
        let elapsed = bucket.updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        bucket.tokens = min(capacity, bucket.tokens + seconds * perSecond)
        bucket.updated = now
        return bucket
    }

}

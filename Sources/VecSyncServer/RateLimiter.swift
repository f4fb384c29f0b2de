/// A token bucket per key (a device token's id): `burst` requests at once, refilled at
/// `perSecond`. Each server instance counts on its own, so behind a load balancer a token
/// gets up to that rate from every instance.
actor RateLimiter {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let perSecond: Double
    private let burst: Double
    private var buckets: [String: Bucket] = [:]
    private let clock = ContinuousClock()

    /// A limiter allowing `perSecond` requests a second with bursts of `burst`; a rate of 0
    /// or less allows everything.
    init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = Double(max(1, burst))
    }

    /// Takes one request from `key`'s bucket; false when it is empty.
    func allow(_ key: String) -> Bool {
        guard perSecond > 0 else { return true }
        let now = clock.now
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        let elapsed = bucket.updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        bucket.tokens = min(burst, bucket.tokens + seconds * perSecond)
        bucket.updated = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        buckets[key] = bucket
        if buckets.count > 100_000 { buckets = buckets.filter { $0.value.tokens < burst } }
        return allowed
    }
}

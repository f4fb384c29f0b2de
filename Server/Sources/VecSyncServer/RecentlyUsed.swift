/// A dictionary that keeps at most `capacity` keys, forgetting the one used longest ago when
/// a new key would pass it: O(1) amortised per use, so no request ever pays for a sweep of
/// every key (the state a flood of client addresses leaves is bounded, and the cost of one
/// more address is constant).
///
/// Uses are kept in order in a queue of (key, stamp); a key's entry holds the stamp of its
/// last use, so queue items with an older stamp are stale and skipped when the oldest is
/// looked for. The queue is compacted when half of it is stale.
struct RecentlyUsed<Value> {
    private var entries: [String: (value: Value, stamp: UInt64)] = [:]
    private var uses: [(key: String, stamp: UInt64)] = []
    private var head = 0
    private var stamp: UInt64 = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { entries.count }

    /// The value of `key`, without counting as a use.
    func peek(_ key: String) -> Value? {
        entries[key]?.value
    }

    /// Sets `key` to `value` as its latest use, forgetting the least recently used key when
    /// the map is full.
    mutating func set(_ key: String, _ value: Value) {
        stamp &+= 1
        if entries[key] == nil, entries.count >= capacity { evictOldest() }
        entries[key] = (value, stamp)
        uses.append((key, stamp))
        if head > 1024 && head * 2 > uses.count { compact() }
    }

    private mutating func evictOldest() {
        while head < uses.count {
            let use = uses[head]
            head += 1
            if entries[use.key]?.stamp == use.stamp {
                entries[use.key] = nil
                return
            }
        }
    }

    private mutating func compact() {
        uses = uses[head...].filter { entries[$0.key]?.stamp == $0.stamp }
        head = 0
    }
}

/// Hashes of the tokens found valid, the most recent 100,000 (``SyncServer/knownTokens``).
/// Knowing one lets a request past its address's hold to the token check, which still
/// looks the token up (a revoked token is refused there).
actor KnownTokens {
    private var hashes = RecentlyUsed<Bool>(capacity: 100_000)

    func insert(_ hash: String) {
        hashes.set(hash, true)
    }

    func contains(_ hash: String) -> Bool {
        hashes.peek(hash) != nil
    }
}

/// A server-wide budget of request-body bytes held in memory at once.
///
/// A route reserves what a body will take (its `Content-Length`, or the route's limit when
/// the length is not announced or the body is compressed) before it reads a byte of it, and
/// gives it back when its answer is made. Past the budget a request waits, its body unread
/// (TCP holds the sender back), until enough is given back or its patience runs out; then
/// it is answered 503 `busy` with `Retry-After`. So eight parallel 64 MiB pushes cost the
/// budget, not eight bodies. One body larger than the whole budget is let through alone.
actor BodyBudget {
    /// The bytes that may be held at once.
    let total: Int
    private var held = 0
    private let clock = ContinuousClock()

    /// A budget of `total` bytes.
    init(total: Int) {
        self.total = max(1, total)
    }

    /// Takes `bytes` (at most the whole budget), waiting up to `patience` for room; the
    /// bytes taken, to give back with ``release(_:)``, or nil when no room came.
    func reserve(_ bytes: Int, patience: Duration) async -> Int? {
        let amount = min(max(0, bytes), total)
        let deadline = clock.now.advanced(by: patience)
        while held + amount > total {
            guard clock.now < deadline, !Task.isCancelled else { return nil }
            // The actor is free while this sleeps: releases come in meanwhile.
            try? await Task.sleep(for: .milliseconds(20))
        }
        held += amount
        return amount
    }

    /// Gives back bytes taken by ``reserve(_:patience:)``.
    func release(_ bytes: Int) {
        held = max(0, held - bytes)
    }

    /// The bytes held now.
    var inUse: Int { held }
}

/// A server-wide budget of request-body bytes held in memory at once, with a share for each
/// space.
///
/// A body is charged as it is read, a part at a time (``take(_:for:patience:)``), not by the
/// length it announces: an upload that announces 64 MiB and trickles a byte every few seconds
/// holds a few bytes, not the budget. Before it keeps a part, a body waits for room both in
/// the whole budget and in its space's share (so one space's uploads cannot take all of it);
/// while it waits its connection is not read (TCP holds the sender back). No room within its
/// patience: the route answers 503 `busy` with `Retry-After`. Everything a body holds is
/// given back when its route has answered (``close(_:)``).
///
/// Bodies read in parts could wait on each other for ever: each holds part of the budget and
/// needs more. When every body holding bytes is waiting, the one that began first is let past
/// the limits until it ends, so the budget is exceeded by at most one body at a time.
actor BodyBudget {
    /// One body being read: what it holds and where.
    struct Body: Sendable {
        fileprivate let ticket: Int
        fileprivate let space: Int64
    }

    /// The bytes that may be held at once.
    let total: Int
    /// The bytes one space's bodies may hold at once.
    let spaceShare: Int
    private var held = 0
    private var heldBySpace: [Int64: Int] = [:]
    private var heldByBody: [Int: Int] = [:]
    private var waiting: Set<Int> = []
    private var exempt: Int?
    private var nextTicket = 0
    private let clock = ContinuousClock()

    /// A budget of `total` bytes, of which one space may hold `spaceShare`.
    init(total: Int, spaceShare: Int) {
        self.total = max(1, total)
        self.spaceShare = min(max(1, spaceShare), self.total)
    }

    /// A body of `space` about to be read.
    func open(space: Int64) -> Body {
        nextTicket += 1
        heldByBody[nextTicket] = 0
        return Body(ticket: nextTicket, space: space)
    }

    /// Charges `bytes` more to `body`, waiting up to `patience` for room; false when no room
    /// came (nothing charged).
    func take(_ bytes: Int, for body: Body, patience: Duration) async -> Bool {
        let amount = max(0, bytes)
        let deadline = clock.now.advanced(by: patience)
        waiting.insert(body.ticket)
        defer { waiting.remove(body.ticket) }
        while !fits(amount, body) {
            if exempt == nil, deadlocked, body.ticket == waiting.min() {
                exempt = body.ticket
                break
            }
            guard clock.now < deadline, !Task.isCancelled else { return false }
            // The actor is free while this sleeps: bodies end and give back meanwhile.
            try? await Task.sleep(for: .milliseconds(10))
        }
        held += amount
        heldBySpace[body.space, default: 0] += amount
        heldByBody[body.ticket, default: 0] += amount
        return true
    }

    /// Gives back everything `body` holds; it is read no more.
    func close(_ body: Body) {
        let amount = heldByBody.removeValue(forKey: body.ticket) ?? 0
        held = max(0, held - amount)
        let space = (heldBySpace[body.space] ?? 0) - amount
        heldBySpace[body.space] = space > 0 ? space : nil
        if exempt == body.ticket { exempt = nil }
    }

    /// The bytes held now.
    var inUse: Int { held }

    private func fits(_ amount: Int, _ body: Body) -> Bool {
        exempt == body.ticket
            || (held + amount <= total && (heldBySpace[body.space] ?? 0) + amount <= spaceShare)
    }

    /// Whether every body holding bytes is waiting for more: none will give any back.
    private var deadlocked: Bool {
        heldByBody.allSatisfy { ticket, bytes in bytes == 0 || waiting.contains(ticket) }
    }
}

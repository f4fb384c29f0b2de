/// How fast a request body comes, checked as each part of it arrives: a body slower than
/// ``SyncServer/Limits/minimumBodyRate`` once ``SyncServer/Limits/bodyGrace`` has passed, or
/// longer than ``SyncServer/Limits/bodyTimeLimit`` in all, is refused with 408 `too-slow`.
/// Without it an upload trickling a byte every few seconds is never idle and is held for ever.
/// The time a body spends waiting for room in the body budget (when the server, not the
/// client, holds it back) is not counted against the rate.
struct BodyPace {
    private let began = ContinuousClock.now
    private let minimumRate: Int
    private let grace: Duration
    private let timeLimit: Duration
    /// The time spent waiting for room in the budget.
    var waited: Duration = .zero

    init(limits: SyncServer.Limits) {
        self.minimumRate = limits.minimumBodyRate
        self.grace = limits.bodyGrace
        self.timeLimit = limits.bodyTimeLimit
    }

    /// Refuses the body when `received` bytes so far are too few for the time it took.
    func check(received: Int) throws {
        let elapsed = ContinuousClock.now - began
        if elapsed > timeLimit {
            throw Self.tooSlow("the body took longer than \(timeLimit) to send")
        }
        let sending = elapsed - waited
        guard minimumRate > 0, sending > grace else { return }
        let seconds = Double(sending.components.seconds) + Double(sending.components.attoseconds) * 1e-18
        if Double(received) < Double(minimumRate) * seconds {
            throw Self.tooSlow(
                "the body came at \(Int(Double(received) / seconds)) bytes a second; the least is \(minimumRate)")
        }
    }

    private static func tooSlow(_ message: String) -> APIError {
        APIError(
            status: .requestTimeout, code: "too-slow", message: message + "; nothing stored",
            headers: [.connection: "close"])
    }
}

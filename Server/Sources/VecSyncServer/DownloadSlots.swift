import Foundation

/// The downloads each token has in flight (``SyncServer/Limits/downloadsPerToken``). A
/// download holds one part (``SyncServer/downloadPartBytes``) in the server at a time, so
/// this caps what one token's downloads make the server hold, however many connections it
/// opens and however slowly it reads them. A download past the cap is answered 429
/// `too-many-downloads` at once. Only tokens with a download in flight are kept.
final class DownloadSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var inFlight: [String: Int] = [:]
    /// The most downloads one token may have in flight.
    let perToken: Int

    /// Slots for `perToken` downloads of each token (at least 1).
    init(perToken: Int) {
        self.perToken = max(1, perToken)
    }

    /// A place for one more download of `tokenID`; nil when it has ``perToken`` in flight.
    func take(_ tokenID: String) -> DownloadSlot? {
        lock.lock()
        defer { lock.unlock() }
        let count = inFlight[tokenID, default: 0]
        guard count < perToken else { return nil }
        inFlight[tokenID] = count + 1
        return DownloadSlot(tokenID: tokenID, slots: self)
    }

    /// The downloads of `tokenID` in flight.
    func count(_ tokenID: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return inFlight[tokenID, default: 0]
    }

    fileprivate func release(_ tokenID: String) {
        lock.lock()
        defer { lock.unlock() }
        let count = inFlight[tokenID, default: 1] - 1
        inFlight[tokenID] = count > 0 ? count : nil
    }
}

/// One download's place in ``DownloadSlots``: given back when the answer that holds it is
/// released, whether it was sent whole, cut short by its client, or never started.
final class DownloadSlot: Sendable {
    let tokenID: String
    let slots: DownloadSlots

    fileprivate init(tokenID: String, slots: DownloadSlots) {
        self.tokenID = tokenID
        self.slots = slots
    }

    deinit { slots.release(tokenID) }
}

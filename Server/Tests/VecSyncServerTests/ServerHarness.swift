import Foundation
import VecSyncServer

/// A space name no other test (or earlier run on the same PostgreSQL) uses.
func uniqueSpace(_ label: String) -> String {
    "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
}

/// A space with `count` tokens.
func makeSpace(_ store: any ServerStore, _ label: String, tokens count: Int = 1) async throws -> (
    space: String, tokens: [String]
) {
    let space = uniqueSpace(label)
    _ = try await store.createSpace(named: space, at: 1)
    var tokens: [String] = []
    for index in 0..<count {
        let (token, record) = AccessToken.issue(label: "device \(index)", at: 1)
        try await store.addToken(record, toSpaceNamed: space)
        tokens.append(token)
    }
    return (space, tokens)
}

/// A server on a fresh store of `backEnd`, with a new space of `count` tokens: what most
/// scenarios start from. Stop the server, then close the store.
func servedSpace(
    _ backEnd: BackEnd, _ label: String, tokens count: Int = 1, limits: SyncServer.Limits = SyncServer.Limits()
) async throws -> (test: TestStore, server: RunningServer, space: String, tokens: [String]) {
    let test = try await TestStore.make(backEnd)
    let server = try await RunningServer.start(test.store, limits: limits)
    let (space, tokens) = try await makeSpace(test.store, label, tokens: count)
    return (test, server, space, tokens)
}

/// Runs blocking work (the transport's synchronous HTTP calls) on a thread of its own, so
/// the cooperative pool stays free to run the in-process server.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try work() })
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

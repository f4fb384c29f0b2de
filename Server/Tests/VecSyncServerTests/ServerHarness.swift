import Foundation
import ServerFixtures
import VecSyncServer

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

/// `body`'s result once `cleanup` has run, whether `body` throws or not (a `defer` cannot
/// await).
func finally<T>(_ body: () async throws -> T, then cleanup: () async -> Void) async throws -> T {
    do {
        let result = try await body()
        await cleanup()
        return result
    } catch {
        await cleanup()
        throw error
    }
}

/// Runs `body` against a server on a fresh store of `backEnd`, then stops the server and
/// closes the store, whether `body` throws or not.
func withServer<T>(
    _ backEnd: BackEnd, limits: SyncServer.Limits = SyncServer.Limits(),
    _ body: (_ test: TestStore, _ server: RunningServer) async throws -> T
) async throws -> T {
    let test = try await TestStore.make(backEnd)
    return try await finally(
        {
            let server = try await RunningServer.start(test.store, limits: limits)
            return try await finally({ try await body(test, server) }, then: { await server.stop() })
        }, then: { await test.close() })
}

/// ``withServer(_:limits:_:)`` with a new space of `count` tokens (its name, its tokens and
/// its id in the store): what most scenarios start from.
func withServedSpace<T>(
    _ backEnd: BackEnd, _ label: String, tokens count: Int = 1, limits: SyncServer.Limits = SyncServer.Limits(),
    _ body: (_ test: TestStore, _ server: RunningServer, _ space: String, _ tokens: [String], _ spaceID: Int64)
        async throws -> T
) async throws -> T {
    try await withServer(backEnd, limits: limits) { test, server in
        let (space, tokens) = try await makeSpace(test.store, label, tokens: count)
        return try await body(test, server, space, tokens, try await ServerScenarios.spaceID(test.store, tokens[0]))
    }
}

/// Two server instances on one database of `backEnd`, as behind a load balancer: the first
/// over `test.store`, the second over `other`, another connection to the same data. Both
/// are stopped and both stores closed afterwards, whether `body` throws or not.
func withTwoInstances<T>(
    _ backEnd: BackEnd, limits: SyncServer.Limits = SyncServer.Limits(),
    _ body: (_ test: TestStore, _ other: any ServerStore, _ servers: [RunningServer]) async throws -> T
) async throws -> T {
    try await withServer(backEnd, limits: limits) { test, server in
        let other = try await test.reopen(backEnd)
        return try await finally(
            {
                let second = try await RunningServer.start(other, limits: limits)
                return try await finally(
                    { try await body(test, other, [server, second]) }, then: { await second.stop() })
            }, then: { await other.close() })
    }
}

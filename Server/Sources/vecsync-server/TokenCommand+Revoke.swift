import ArgumentParser
import VecSyncServer

extension TokenCommand {
    /// `vecsync-server token revoke ID`.
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token: its next request is refused.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The token id printed when it was issued.")
        var id: String

        func run() async throws {
            let revoked = try await store.withStore { try await $0.revokeToken(id: id, at: nowMilliseconds()) }
            guard revoked else { throw ValidationError("no token has id '\(id)'") }
            print("revoked token \(id)")
        }
    }
}

import ArgumentParser
import VecSyncServer

extension TokenCommand {
    /// `vecsync-server token list --space NAME`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a space's tokens (ids and labels, never the tokens).")
        @OptionGroup var store: StoreOptions
        @Option(name: .long, help: "The space.")
        var space: String

        func run() async throws {
            for token in try await store.withStore({ try await $0.tokens(ofSpaceNamed: space) }) {
                let scope = token.device.map { "device \($0)" } ?? "space"
                print("\(token.id)\t\(token.revokedAt == nil ? "live" : "revoked")\t\(scope)\t\(token.label)")
            }
        }
    }
}

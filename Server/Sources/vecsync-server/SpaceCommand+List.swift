import ArgumentParser
import VecSyncServer

extension SpaceCommand {
    /// `vecsync-server space list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the spaces.")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            for space in try await store.withStore({ try await $0.spaces() }) { print(space.name) }
        }
    }
}

import ArgumentParser
import VecSyncServer

extension SpaceCommand {
    /// `vecsync-server space create NAME`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a space: one user's library.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Its name: 1 to 64 letters, digits, '-' or '_'.")
        var name: String

        func validate() throws {
            let allowed = name.utf8.allSatisfy {
                (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 95
            }
            guard (1...64).contains(name.utf8.count), allowed else {
                throw ValidationError("a space name has 1 to 64 letters, digits, '-' or '_'")
            }
        }

        func run() async throws {
            let space = try await store.withStore { try await $0.createSpace(named: name, at: nowMilliseconds()) }
            print("created space '\(space.name)'")
        }
    }
}

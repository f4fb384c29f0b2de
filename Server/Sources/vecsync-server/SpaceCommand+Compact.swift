import ArgumentParser
import VecSyncServer

extension SpaceCommand {
    /// `vecsync-server space compact NAME`.
    struct Compact: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a space's bootstrap snapshot, then drop the history it holds when safe.",
            discussion: """
                Folds the change sets after the last snapshot into a new one (each row's \
                winning state, vectors as raw bytes), from which new devices bootstrap instead \
                of replaying the history. Then drops the change sets up to the slowest \
                registered device's pull point, which every device already holds. With \
                --force it drops everything the snapshot holds: a device behind is told to \
                bootstrap again (its unpushed changes are kept and pushed). With \
                --snapshot-only nothing is dropped. Safe to run while the server serves.
                """)
        @OptionGroup var store: StoreOptions
        @Argument(help: "The space.")
        var name: String
        @Flag(name: .long, help: "Drop everything the snapshot holds, even history a device has not pulled.")
        var force = false
        @Flag(name: .long, help: "Make the snapshot, drop nothing.")
        var snapshotOnly = false

        func run() async throws {
            try await store.withStore { store in
                guard let space = try await store.spaces().first(where: { $0.name == name }) else {
                    throw ServerStoreError.noSuchSpace(name)
                }
                let compactor = SpaceCompactor(store: store)
                guard let snapshot = try await compactor.makeSnapshot(spaceID: space.id, at: nowMilliseconds()) else {
                    print("space '\(name)' has no change set: no snapshot made")
                    return
                }
                print(
                    "snapshot of '\(name)' through change set \(snapshot.seq): \(snapshot.rows) rows, \(snapshot.size) bytes"
                )
                if !snapshotOnly {
                    let (through, dropped) = try await compactor.compact(spaceID: space.id, force: force)
                    print("compacted through change set \(through): \(dropped) change sets dropped")
                }
            }
        }
    }
}

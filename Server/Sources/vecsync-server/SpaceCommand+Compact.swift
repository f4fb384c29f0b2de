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
                --snapshot-only nothing is dropped. Safe to run while the server serves;                 run one compaction of a space at a time.

                A snapshot larger than --part-mib is made in parts, each row in one of them:                 the compaction and each device hold one part at a time, so a space of any                 size gets a snapshot. Each part is a pass over the history.
                """)
        @OptionGroup var store: StoreOptions
        @Argument(help: "The space.")
        var name: String
        @Flag(name: .long, help: "Drop everything the snapshot holds, even history a device has not pulled.")
        var force = false
        @Flag(name: .long, help: "Make the snapshot, drop nothing.")
        var snapshotOnly = false
        @Option(name: .long, help: "The size in MiB the snapshot's parts keep under (1 to 952).")
        var partMib = SpaceCompactor.defaultSnapshotPartBytes >> 20

        func validate() throws {
            guard (1...(SpaceCompactor.largestStoredValue >> 20)).contains(partMib) else {
                throw ValidationError("--part-mib must be from 1 to \(SpaceCompactor.largestStoredValue >> 20)")
            }
        }

        func run() async throws {
            try await store.withStore { store in
                guard let space = try await store.spaces().first(where: { $0.name == name }) else {
                    throw ServerStoreError.noSuchSpace(name)
                }
                let compactor = SpaceCompactor(store: store, snapshotPartBytes: partMib << 20)
                guard let snapshot = try await compactor.makeSnapshot(spaceID: space.id, at: nowMilliseconds()) else {
                    print("space '\(name)' has no change set: no snapshot made")
                    return
                }
                let parts = snapshot.parts.map { " in \($0.count) parts" } ?? ""
                print(
                    "snapshot of '\(name)' through change set \(snapshot.seq): \(snapshot.rows) rows, \(snapshot.size) bytes\(parts)"
                )
                if !snapshotOnly {
                    let (through, dropped) = try await compactor.compact(spaceID: space.id, force: force)
                    print("compacted through change set \(through): \(dropped) change sets dropped")
                }
            }
        }
    }
}

import ArgumentParser
import Foundation
import VecSyncServer

/// `vecsync-server new-epoch`.
struct NewEpochCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new-epoch",
        abstract: "Mark the store as restored from a backup: devices pull again and re-push what it lost.",
        discussion: """
            Gives the store a new generation. Run it after restoring the store by any means \
            other than a copy made by `vecsync-server backup` (which carries a new generation \
            already): pg_restore, a file system snapshot, a copied file. Devices that synced \
            with the store before then pull again from the start (what they hold is skipped) \
            and push again what the restored store lacks. Harmless otherwise: one full \
            listing per device.
            """)

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let epoch = try await store.withStore { try await $0.newEpoch() }
        print("the store's generation is now \(epoch)")
    }
}

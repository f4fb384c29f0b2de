import ArgumentParser
import VecSyncServer

extension TokenCommand {
    /// `vecsync-server token issue --space NAME [--device SITE]`.
    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a token for one space, or for one device of a space.",
            discussion: """
                The token is printed once and stored only as its SHA-256: copy it now. Issue one \
                per device, so one can be revoked alone. With --device the token is bound to that \
                device id (the replica's sync site id): it reads the space, but registers and \
                pushes only as that device, so a leaked token cannot write as another.
                """
        )
        @OptionGroup var store: StoreOptions
        @Option(name: .long, help: "The space the token opens.")
        var space: String
        @Option(name: .long, help: "Whom or what it is for.")
        var label = ""
        @Option(name: .long, help: "Bind the token to this device id (its sync site id).")
        var device: String?

        func validate() throws {
            if let device, !(1...200).contains(device.utf8.count) {
                throw ValidationError("--device must have 1 to 200 bytes")
            }
        }

        func run() async throws {
            let (token, record) = AccessToken.issue(label: label, device: device, at: nowMilliseconds())
            try await store.withStore { try await $0.addToken(record, toSpaceNamed: space) }
            let scope = device.map { "device '\($0)' of space '\(space)'" } ?? "space '\(space)'"
            print("token id \(record.id) for \(scope) (revoke with: vecsync-server token revoke \(record.id))")
            print(token)
        }
    }
}

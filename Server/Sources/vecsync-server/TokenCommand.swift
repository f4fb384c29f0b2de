import ArgumentParser

/// `vecsync-server token …`.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Issue, list and revoke space and device tokens.",
        subcommands: [Issue.self, List.self, Revoke.self])
}

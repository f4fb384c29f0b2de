import ArgumentParser

/// `vecsync-server space …`.
struct SpaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "space", abstract: "Create, list and compact spaces.",
        subcommands: [Create.self, List.self, Compact.self])
}

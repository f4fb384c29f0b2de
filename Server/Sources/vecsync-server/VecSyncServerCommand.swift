import ArgumentParser
import Foundation
import VecSyncServer

/// `vecsync-server`: the sync relay and its admin commands.
@main
struct VecSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vecsync-server",
        abstract: "Relay change sets between the devices of each space, over HTTP.",
        discussion: """
            Quick start (SQLite in ./server-data):
              vecsync-server space create family
              vecsync-server token issue --space family --label "Ana's phone"
              vecsync-server serve --port 8080
            then, on each device:
              VECSYNC_TOKEN=vst_… vecsync-cli sync --db photos.db --server http://HOST:8080 --space family

            The server speaks plain HTTP: put it behind a reverse proxy that terminates TLS \
            (or keep it on loopback). With --postgres every command uses that database \
            instead, and several `serve` instances may share it.
            """,
        version: SyncServer.version,
        subcommands: [
            ServeCommand.self, SpaceCommand.self, TokenCommand.self, BackupCommand.self, NewEpochCommand.self,
        ])
}

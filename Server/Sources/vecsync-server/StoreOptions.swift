import ArgumentParser
import Foundation
import VecSyncServer

/// Where the server keeps its data: `--data DIR` (SQLite, the default) or `--postgres URL`.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The folder of the SQLite store (created when missing; env VECSYNC_DATA).")
    var data: String = ServerEnvironment.value("VECSYNC_DATA") ?? "./server-data"

    @Option(
        name: .customLong("postgres"),
        help: ArgumentHelp(
            "A PostgreSQL URL, postgres://user@host:port/database; used instead of --data (env VECSYNC_POSTGRES_URL; the password from VECSYNC_POSTGRES_PASSWORD or the file VECSYNC_POSTGRES_PASSWORD_FILE names).",
            valueName: "url"))
    var postgresURL: String?

    /// `--postgres`, else `VECSYNC_POSTGRES_URL`; nil: the SQLite store.
    var postgres: String? { postgresURL ?? ServerEnvironment.value("VECSYNC_POSTGRES_URL") }

    func validate() throws {
        if data.isEmpty { throw ValidationError("--data cannot be empty") }
        try ServerEnvironment.check()
    }

    /// The store, prepared (tables created when missing).
    func open() async throws -> any ServerStore {
        let store: any ServerStore
        if let postgres {
            store = try PostgresServerStore(url: try ServerEnvironment.postgresURL(postgres))
        } else {
            store = try SQLiteServerStore(directory: URL(fileURLWithPath: data))
        }
        do {
            try await store.prepare()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Runs `work` with the store open, and closes it afterwards, whether `work` throws or not.
    func withStore<T>(_ work: (any ServerStore) async throws -> T) async throws -> T {
        let store = try await open()
        do {
            let result = try await work(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}

/// Milliseconds since 1970.
func nowMilliseconds() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1000).rounded())
}

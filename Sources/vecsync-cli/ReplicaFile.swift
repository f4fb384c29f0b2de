import ArgumentParser
import Foundation
import VecSync

/// Opening the database file of a replica for `track`, `sync` and `changes`.
enum ReplicaFile {
    /// Opens an existing database file with the extension on every connection, so merges
    /// can refresh vec0 indexes; refuses to create a file by mistake.
    static func open(_ path: String) throws -> VecSyncDatabase {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("no database file at \(path)")
        }
        return try VecSyncDatabase(path: path)
    }
}

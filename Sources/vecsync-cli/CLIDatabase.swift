import Foundation
import VecSync

/// Opening database files for the subcommands.
enum CLIDatabase {
    /// Opens an existing database file (refusing to create one by mistake), or creates it
    /// when `create` is true.
    static func open(_ path: String, create: Bool = false) throws -> VecSyncDatabase {
        guard create || FileManager.default.fileExists(atPath: path) else {
            throw ValidationErrorText("no database file at \(path)")
        }
        return try VecSyncDatabase(path: path)
    }
}

/// An error whose text is shown as is.
struct ValidationErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

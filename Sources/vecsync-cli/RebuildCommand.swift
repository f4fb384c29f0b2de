import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli rebuild`: derived indexes rebuilt from the canonical rows.
struct RebuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild a database's vector and text indexes from its tables.",
        discussion: """
            Rebuilds every vec0 index registered by VectorIndex (vecsync_vector_indexes), \
            every libSQL vector index (vecsync_rebuild), and the photo library's FTS5 index \
            (photos_fts) when present, or only the one named by --index. Indexes are derived \
            data: rebuilding loses nothing. Each is rebuilt in its own transaction.
            """)

    @Option(name: .long, help: "The database file.")
    var db: String

    @Option(name: .long, help: "Only this index.")
    var index: String?

    func run() throws {
        let database = try CLIDatabase.open(db)
        let (vectorIndexes, libsqlIndexes, hasPhotoText) = try database.read { db in
            (try VectorIndex.registered(in: db), try LibSQLVectorIndex.all(in: db),
             try db.tableExists(PhotoStore.textIndexName) && db.tableExists("photos"))
        }
        var rebuilt = 0
        for vectorIndex in vectorIndexes where index == nil || index == vectorIndex.name {
            let seconds = try timed { try database.write { db in try vectorIndex.rebuild(db) } }
            let rows = try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(vectorIndex.name.quotedSQLIdentifier)") ?? 0 }
            print("rebuilt \(vectorIndex.name) (vec0 over \(vectorIndex.table).\(vectorIndex.embeddingColumn)): \(rows) rows in \(seconds)")
            rebuilt += 1
        }
        for libsql in libsqlIndexes where index == nil || index == libsql.name {
            let seconds = try timed { try database.write { db in try libsql.rebuild(db) } }
            print("rebuilt \(libsql.name) (libSQL index over \(libsql.table).\(libsql.column)) in \(seconds)")
            rebuilt += 1
        }
        if hasPhotoText && (index == nil || index == PhotoStore.textIndexName) {
            let seconds = try timed { try database.write { db in try PhotoStore.rebuildTextIndex(db) } }
            print("rebuilt \(PhotoStore.textIndexName) (FTS5 over photos and notes) in \(seconds)")
            rebuilt += 1
        }
        if rebuilt == 0 {
            throw ValidationErrorText(index.map { "no index named \($0)" } ?? "no vector or text index in \(db)")
        }
    }

    private func timed(_ body: () throws -> Void) throws -> String {
        let start = Date()
        try body()
        return String(format: "%.3f s", Date().timeIntervalSince(start))
    }
}

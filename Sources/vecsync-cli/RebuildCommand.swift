import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli rebuild`: derived indexes rebuilt from the canonical rows.
struct RebuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild a database's vector and text indexes from its tables.",
        discussion: """
            Rebuilds every index of the database's derived-index catalogue — vec0 indexes \
            registered by VectorIndex, libSQL vector indexes (vecsync_rebuild), FTS5 tables \
            registered with the sync engine — and the photo library's photos_fts when present, \
            or only the one named by --index. Indexes are derived data: rebuilding loses \
            nothing. Each is rebuilt in its own transaction.
            """)

    @OptionGroup var selection: IndexSelection

    func run() throws {
        let database = try CLIDatabase.open(selection.db)
        let (catalogue, hasPhotoText) = try database.read { db in
            (try DerivedIndexCatalogue(db), try PhotoStore.hasTextIndex(db))
        }
        var rebuilt = 0
        for vectorIndex in catalogue.vectorIndexes where selection.includes(vectorIndex.name) {
            let seconds = try timed {
                try database.write { db in _ = try catalogue.rebuild(db, only: vectorIndex.name) }
            }
            let rows = try database.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(vectorIndex.name.quotedSQLIdentifier)") ?? 0
            }
            print(
                "rebuilt \(vectorIndex.name) (vec0 over \(vectorIndex.table).\(vectorIndex.embeddingColumn)): \(rows) rows in \(seconds)"
            )
            rebuilt += 1
        }
        for derived in catalogue.indexes where selection.includes(derived.name) {
            let seconds = try timed { try database.write { db in _ = try catalogue.rebuild(db, only: derived.name) } }
            let kind = derived.kind == .fts5 ? "FTS5" : "libSQL index"
            print("rebuilt \(derived.name) (\(kind) over \(derived.table)) in \(seconds)")
            rebuilt += 1
        }
        if hasPhotoText && selection.includes(PhotoStore.textIndexName) {
            let seconds = try timed { try database.write { db in try PhotoStore.rebuildTextIndex(db) } }
            print("rebuilt \(PhotoStore.textIndexName) (FTS5 over photos and notes) in \(seconds)")
            rebuilt += 1
        }
        if rebuilt == 0 {
            throw selection.nothingFound
        }
    }

    private func timed(_ body: () throws -> Void) throws -> String {
        let start = Date()
        try body()
        return String(format: "%.3f s", Date().timeIntervalSince(start))
    }
}

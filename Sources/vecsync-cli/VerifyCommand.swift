import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli verify`: derived indexes checked against the canonical rows.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that a database's indexes hold exactly its tables' current vectors.",
        discussion: """
            For each vec0 index registered by VectorIndex and each libSQL vector index, it \
            reports the rows missing from the index, stale in it (vector or metadata differ), \
            extra in it, and the stored vectors that cannot be indexed (wrong size); for the \
            photo library's photos_fts, the photos whose text row is out of step.

            The exit status is 1 when an index is out of step; vecsync-cli rebuild repairs it.
            """)

    @Option(name: .long, help: "The database file.")
    var db: String

    @Option(name: .long, help: "Only this index.")
    var index: String?

    func run() throws {
        let database = try CLIDatabase.open(db)
        let libsqlNames = try database.read { db in Set(try LibSQLVectorIndex.all(in: db).map(\.name)) }
        let (reports, textOutOfStep) = try database.read { db -> ([VectorIndexReport], [String]?) in
            var reports: [VectorIndexReport] = []
            for vectorIndex in try VectorIndex.registered(in: db) where index == nil || index == vectorIndex.name {
                reports.append(try vectorIndex.verify(db))
            }
            for libsql in try LibSQLVectorIndex.all(in: db) where index == nil || index == libsql.name {
                reports.append(try libsql.verify(db))
            }
            var text: [String]?
            if try db.tableExists(PhotoStore.textIndexName), try db.tableExists("photos"),
               index == nil || index == PhotoStore.textIndexName {
                text = try PhotoStore.verifyTextIndex(db)
            }
            return (reports, text)
        }
        var healthy = true
        for report in reports {
            if !report.exists && libsqlNames.contains(report.index) {
                // The extension fills a libSQL index on its first search: nothing is stale.
                print("\(report.index): not built yet (\(report.canonicalRows) rows); the first search builds it")
                continue
            }
            print(report)
            if !report.isConsistent { healthy = false }
        }
        if let textOutOfStep {
            let keys = textOutOfStep.prefix(5).joined(separator: ", ") + (textOutOfStep.count > 5 ? ", …" : "")
            print("\(PhotoStore.textIndexName): \(textOutOfStep.count) photos out of step"
                  + (textOutOfStep.isEmpty ? " — consistent" : " [\(keys)] — out of step"))
            if !textOutOfStep.isEmpty { healthy = false }
        }
        if reports.isEmpty && textOutOfStep == nil {
            throw ValidationErrorText(index.map { "no index named \($0)" } ?? "no vector or text index in \(db)")
        }
        if !healthy { throw ExitCode(1) }
    }
}

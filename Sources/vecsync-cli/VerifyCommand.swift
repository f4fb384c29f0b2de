import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli verify`: derived indexes checked against the canonical rows.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that a database's indexes hold exactly its tables' current rows.",
        discussion: """
            Checks every index of the database's derived-index catalogue: each vec0 index \
            registered by VectorIndex (rows missing from the index, stale in it, extra in it, \
            and stored vectors that cannot be indexed), each libSQL vector index, and each \
            FTS5 table registered with the sync engine (rows missing, differing or extra); \
            and, for the photo library, photos_fts, the photos whose text row is out of step.

            The exit status is 1 when an index is out of step; vecsync-cli rebuild repairs it.
            """)

    @OptionGroup var selection: IndexSelection

    func run() throws {
        let database = try CLIDatabase.open(selection.db)
        let (checks, textOutOfStep) = try database.read { db -> ([DerivedIndexCatalogue.Check], [String]?) in
            let checks = try DerivedIndexCatalogue(db).verify(db, only: selection.index)
            // The photo library's text index covers two tables (photos and their notes) and
            // is kept by the store's own triggers: the store checks it.
            var text: [String]?
            if try PhotoStore.hasTextIndex(db), selection.includes(PhotoStore.textIndexName) {
                text = try PhotoStore.verifyTextIndex(db)
            }
            return (checks, text)
        }
        var healthy = true
        for check in checks {
            print(check)
            if !check.isConsistent { healthy = false }
        }
        if let textOutOfStep {
            let keys = textOutOfStep.prefix(5).joined(separator: ", ") + (textOutOfStep.count > 5 ? ", …" : "")
            print(
                "\(PhotoStore.textIndexName): \(textOutOfStep.count) photos out of step"
                    + (textOutOfStep.isEmpty ? " — consistent" : " [\(keys)] — out of step"))
            if !textOutOfStep.isEmpty { healthy = false }
        }
        if checks.isEmpty && textOutOfStep == nil {
            throw selection.nothingFound
        }
        if !healthy { throw ExitCode(1) }
    }
}

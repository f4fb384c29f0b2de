import Foundation
import VecSync
import VecSyncTestSupport

/// What the examples of README.md and docs/*.md are handed: the values a page's prose names
/// (`path`, `query`, `embedding`, …), made here so each example can run as it is written.
///
/// Each example is a region of a file of this folder between `// snippet: NAME` and
/// `// end snippet`; `scripts/check-docs.py` (make check-docs) checks that every `swift`
/// block of the pages is one of them, byte for byte, so a page shows only code this target
/// compiles.
enum DocExample {
    /// A new database path in a folder of its own.
    static func databasePath(_ label: String) throws -> String {
        try temporaryDirectory("doc-\(label)").appendingPathComponent("app.db").path
    }

    /// A new empty folder's path.
    static func folderPath(_ label: String) throws -> String {
        try temporaryDirectory("doc-\(label)-folder").path
    }

    /// A seeded vector of `dimensions` floats.
    static func vector(_ dimensions: Int, seed: UInt64) -> Vector {
        var random = SeededRandom(seed: seed)
        return Vector.random(dimensions: dimensions, using: &random)
    }
}

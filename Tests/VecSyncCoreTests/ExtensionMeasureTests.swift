import Testing
import VecSyncCore

/// Distances, normalisation and the build report. Every case runs in-process and in the
/// sqlite3 shell; a REAL prints as SQLite prints it (`1.0`, 15 significant digits).
@Suite("Vector distances and measures")
struct ExtensionMeasureTests {
    @Test("vecsync_version() is a semantic version")
    func versionIsSemantic() {
        let parts = VecSyncExtension.version.split(separator: ".")
        #expect(
            parts.count == 3 && parts.allSatisfy { Int($0) != nil },
            "vecsync_version() = \(VecSyncExtension.version)")
    }

}

import Foundation

/// A temporary folder held by a suite instance: Swift Testing makes one instance per test,
/// so each test gets a new folder, removed when the instance goes after the test.
final class ScratchFolder: Sendable {
    /// The folder (created when the instance is; a test that cannot create it fails at its
    /// first use of the folder).
    let url: URL

    /// A new, empty folder whose name carries `label`.
    init(_ label: String) {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("vecsync-\(label)-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

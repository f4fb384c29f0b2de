import Foundation

/// A fresh, empty directory for a test's files, named `vecsync-<label>-<uuid>`; the caller
/// removes it.
public func temporaryDirectory(_ label: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("vecsync-\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

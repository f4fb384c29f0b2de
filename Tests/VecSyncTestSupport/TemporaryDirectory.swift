import Foundation

/// A fresh, empty directory for a test's files, named `vecsync-<label>-<uuid>`; the caller
/// removes it.
public func temporaryDirectory(_ label: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("vecsync-\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs `body` with the path of a file named `name` in a fresh temporary directory (the file
/// itself is not created), then removes the directory, whether `body` threw or not.
///
/// ```swift
/// try withTemporaryFile("migrate", named: "sv.db") { path in try DatabaseQueue(path: path) … }
/// ```
public func withTemporaryFile<T>(_ label: String, named name: String = "test.db", _ body: (String) throws -> T)
    throws -> T
{
    let directory = try temporaryDirectory(label)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory.appendingPathComponent(name).path)
}

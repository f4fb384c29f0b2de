import Foundation
import ServerTestSupport
import Testing
import VecSyncServer

/// A tmpfs of a few MiB mounted on a new temporary folder, for a disk that fills up.
struct TinyFileSystem {
    let directory: URL

    /// Whether this process may mount one: root on Linux, with `mount` present.
    static let canMount: Bool = {
        #if os(Linux)
            return getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")
        #else
            return false
        #endif
    }()

    static let skipReason: Comment = "mounting a tmpfs needs root on Linux; the full-disk test is skipped"

    init(megabytes: Int) throws {
        directory = try temporaryDirectory("tiny-fs")
        try ProgramRun.run(
            URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", directory.path])
    }

    /// A file of `kilobytes` in it, to remove when space should come back.
    func ballast(kilobytes: Int) throws -> URL {
        let file = directory.appendingPathComponent("ballast")
        try Data(repeating: 0, count: kilobytes << 10).write(to: file)
        return file
    }

    /// Fills what is left of it with a file of its own (writes until none fits); returns it.
    func fillUp() -> URL {
        let file = directory.appendingPathComponent("filler")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        guard let handle = try? FileHandle(forWritingTo: file) else { return file }
        let block = Data(repeating: 0, count: 4096)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()
        return file
    }

    func remove() {
        _ = try? ProgramRun.run(URL(fileURLWithPath: "/bin/umount"), [directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}

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

    func remove() {
        _ = try? ProgramRun.run(URL(fileURLWithPath: "/bin/umount"), [directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}

import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

#if canImport(Glibc)
    import Glibc
#endif

/// Syncing through a shared folder: any order converges; stray, partial, duplicate and
/// corrupt files are tolerated.
@Suite("Folder transport")
struct FolderTransportTests: FolderSuite {
    let scratch = ScratchFolder("folder")
    let a: Replica, b: Replica
    init() throws { (a, b) = (try Fixture.replica("a"), try Fixture.replica("b")) }

    @Test("three replicas syncing through one folder in any order converge")
    func threeReplicasConverge() throws {
        let replicas = try ["mac", "phone", "tablet"].map {
            try Fixture.replica($0, options: Replica.Options(maximumBatchRows: 7))
        }
        for (index, replica) in replicas.enumerated() {
            for row in 0..<20 {
                try Self.write(
                    replica, "INSERT INTO photos (id, title, embedding) VALUES (?, ?, ?)",
                    ["\(replica.site)-\(row)", "t\(index)", Vector([Float(row), 1, 0, Float(index)]).blob])
            }
        }
        try Self.write(replicas[0], "UPDATE photos SET rating = 3")
        try replicas[1].sync(through: transport)
        try replicas[0].sync(through: transport)
        try Self.write(replicas[2], "DELETE FROM photos WHERE id LIKE 'tablet-1%'")
        try replicas[2].sync(through: transport)
        try replicas[1].sync(through: transport)
        try replicas[0].sync(through: transport)
        try replicas[2].sync(through: transport)
        let expected = try Fixture.snapshot(replicas[0])
        #expect(expected["photos"]?.count == 49)
        for replica in replicas.dropFirst() {
            #expect(try Fixture.snapshot(replica) == expected, "\(replica.site)")
        }
        let report = try replicas[0].sync(through: transport)
        #expect(report.applied == 0)
    }

    @Test("unknown, temporary, duplicate and corrupt files are skipped; a corrupt one is reported")
    func strayFilesAreTolerated() throws {
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        try a.sync(through: transport)
        let siteFolder = folder.appendingPathComponent("a")
        let files = try FileManager.default.contentsOfDirectory(atPath: siteFolder.path)
        #expect(files.count == 1)
        try Data("hello".utf8).write(to: folder.appendingPathComponent("README.txt"))
        try Data("partial".utf8).write(to: siteFolder.appendingPathComponent(".partial.tmp"))
        try Data("junk".utf8).write(to: siteFolder.appendingPathComponent("notes.txt"))
        // A corrupt file later in a's sequence: the checksum catches it.
        let name = FolderTransport.fileName(since: 100, through: 200)
        var bytes = try Data(contentsOf: siteFolder.appendingPathComponent(files[0]))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: siteFolder.appendingPathComponent(name))

        let report = try b.sync(through: transport)
        #expect(report.merges.count == 1)
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.contains(name) == true)
        #expect(report.problems.first?.contains("checksum") == true)
        #expect(report.unknownFiles == 2)
        #expect(try MergeTests.photo(b, "p1")?["title"] as String? == "one")
        // Syncing again merges nothing twice.
        let again = try b.sync(through: transport)
        #expect(again.applied == 0)
    }

    @Test("a read-only replica pulls but never pushes")
    func readOnlyReplicaNeverPushes() throws {
        let mac = try Fixture.replica("mac")
        let phone = try Fixture.replica("phone")
        try Self.write(mac, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        try phone.setReadOnly(true)
        try mac.sync(through: transport)
        let report = try phone.sync(through: transport)
        #expect(report.readOnly)
        #expect(report.applied == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("phone").path))
    }

    @Test("site folder names are reversible and safe for any site id")
    func folderNamesRoundTrip() {
        for site: SiteID in ["mac", "Jane's iPhone", "../etc", ".hidden", "a/b", "é"] {
            let name = FolderTransport.folderName(for: site)
            #expect(!name.contains("/") && !name.hasPrefix("."), "\(name)")
            #expect(FolderTransport.site(fromFolderName: name) == site)
        }
    }

    @Test("symbolic links, pipes and linked subfolders in the folder are skipped, never read")
    func linksAndSpecialFilesAreNotRead() throws {
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        try a.sync(through: transport)
        let secret = folder.appendingPathComponent("secret.txt")
        try Data("not a change set".utf8).write(to: secret)
        let evil = folder.appendingPathComponent("evil")
        try FileManager.default.createDirectory(at: evil, withIntermediateDirectories: true)
        let linkName = FolderTransport.fileName(since: 0, through: 5)
        try FileManager.default.createSymbolicLink(
            at: evil.appendingPathComponent(linkName), withDestinationURL: secret)
        let pipeName = FolderTransport.fileName(since: 5, through: 9)
        #expect(mkfifo(evil.appendingPathComponent(pipeName).path, 0o600) == 0, "a pipe that would block a reader")
        // A subfolder that is a link to another site's folder is not a site.
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("c"),
            withDestinationURL: folder.appendingPathComponent("a"))

        let report = try b.sync(through: transport)
        #expect(report.applied == 1, "a's own file is merged")
        #expect(
            report.problems.sorted() == [
                "evil/\(linkName): skipped: a symbolic link or special file, not read",
                "evil/\(pipeName): skipped: a symbolic link or special file, not read",
            ])
        #expect(report.unknownFiles == 2, "secret.txt and the linked subfolder c")
        #expect(try b.peers().map(\.site).contains("c") == false)
    }

    @Test("a full disk during the pull ends the sync with the database's error, not a refused file")
    func databaseFailuresAreNotRefusedFiles() throws {
        for row in 0..<300 {
            try Self.write(
                a, "INSERT INTO photos (id, title, embedding) VALUES (?, ?, ?)",
                ["p\(row)", String(repeating: "x", count: 500), Vector([Float(row), 1, 0, 0]).blob])
        }
        try a.sync(through: transport)
        // SQLITE_FULL, as on a full disk: the database may not grow by more than a page.
        try b.writer.write { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 1)")
        }
        do {
            let report = try b.sync(through: transport)
            Issue.record("the sync went on: \(report); \(report.problems)")
        } catch let VecSyncError.sqlite(message, resultCode, _) {
            #expect(resultCode & 0xff == 13, "\(message)")
        }
        #expect(try b.peers().first { $0.site == "a" }?.received == 0, "nothing was merged")
    }
}

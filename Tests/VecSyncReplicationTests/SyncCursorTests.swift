import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncHTTP
@testable import VecSyncReplication

/// Push cursors, pull cursors and folder markers share `vecsync_published`; ``SyncCursor``
/// owns how each kind is named there. The names are the ones databases already hold, so
/// these tests state them literally.
@Suite("Typed sync cursors")
struct SyncCursorTests: FolderSuite {
    let scratch = ScratchFolder("cursor-names")

    @Test(
        "each kind of cursor is stored under the name databases already hold, and read back as itself",
        arguments: [
            (SyncCursor.push("/Volumes/Shared/photos"), "/Volumes/Shared/photos"),
            (.push("vecsync-server:store-1/family"), "vecsync-server:store-1/family"),
            (.pull("vecsync-server:store-1/family"), "pull:vecsync-server:store-1/family"),
            (.pullEpoch("vecsync-server:store-1/family"), "pull:epoch:vecsync-server:store-1/family"),
            (.pullMark("vecsync-server:store-1/family"), "pull:mark:vecsync-server:store-1/family"),
            (.lastFile("/Volumes/Shared/photos"), "file:/Volumes/Shared/photos"),
        ])
    func storedNames(cursor: SyncCursor, stored: String) {
        #expect(cursor.storedName == stored)
        #expect(SyncCursor(storedName: stored) == cursor)
        #expect(cursor.isPush == (stored.hasPrefix("/") || stored.hasPrefix("vecsync-server:")))
    }

    @Test("a server transport names its cursors by the server's store and the space, as before")
    func serverCursorNames() {
        let transport = HTTPTransport(server: URL(string: "http://127.0.0.1:1")!, space: "family", token: "t")
        #expect(transport.pushCursorKey(storeID: "store-1") == "vecsync-server:store-1/family")
        #expect(transport.pullCursorKey(storeID: "store-1") == "pull:vecsync-server:store-1/family")
        #expect(transport.pullCursor(storeID: "store-1") == .pull("vecsync-server:store-1/family"))
        #expect(transport.epochCursor(storeID: "store-1").storedName == "pull:epoch:vecsync-server:store-1/family")
    }

    @Test("rows an existing database holds are read through the typed cursors; the status lists push cursors only")
    func existingRowsReadTyped() throws {
        let replica = try Fixture.replica("a")
        try replica.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO vecsync_published (destination, through) VALUES
                      ('/shared', 7), ('file:/shared', 5), ('pull:vecsync-server:s/f', 11),
                      ('pull:epoch:vecsync-server:s/f', 3), ('vecsync-server:s/f', 9)
                    """)
        }
        #expect(try replica.cursor(.push("/shared")) == 7)
        #expect(try replica.cursor(.lastFile("/shared")) == 5)
        #expect(try replica.cursor(.pull("vecsync-server:s/f")) == 11)
        #expect(try replica.cursor(.pullEpoch("vecsync-server:s/f")) == 3)
        #expect(try replica.cursor(.push("vecsync-server:s/f")) == 9)
        #expect(try replica.cursor(.pull("/shared")) == 0)
        #expect(try replica.syncStatus().destinations.map(\.destination) == ["/shared", "vecsync-server:s/f"])
    }

    @Test("a folder sync writes its push cursor under the folder's path and its file marker under file:")
    func folderSyncWritesTheKnownNames() throws {
        let a = try Fixture.replica("a")
        try a.writer.write { db in try db.execute(sql: "INSERT INTO photos (id, title) VALUES ('p1', 'one')") }
        try a.sync(through: transport)
        let rows = try a.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT destination, through FROM vecsync_published ORDER BY destination")
                .map { "\($0["destination"] as String)=\($0["through"] as Int64)" }
        }
        let sequence = try a.currentSequence()
        #expect(rows == ["\(transport.destination)=\(sequence)", "file:\(transport.destination)=\(sequence)"])
    }
}

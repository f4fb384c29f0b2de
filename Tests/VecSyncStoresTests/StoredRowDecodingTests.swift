import Foundation
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncStores

/// A synced row may arrive with columns still NULL (added on another device, written by an
/// older version): the records read them as the stores document, never as an error.
@Suite("Store records read NULL columns as empty values")
struct StoredRowDecodingTests {
    @Test func choirRowsWithNullColumnsReadAsEmptyValues() throws {
        let messages = try MessageStore(VecSyncDatabase.inMemory(), dimensions: 4)
        try messages.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO users (id) VALUES ('u1');
                    INSERT INTO threads (id, k0, alpha, m) VALUES ('t1', 1.5, 0.5, 2);
                    INSERT INTO messages (id) VALUES ('m1');
                    INSERT INTO parameter_history (thread_id, k0, alpha, m) VALUES ('t1', 1.5, 0.5, 2);
                    """)
        }
        let epoch = Date(timeIntervalSince1970: 0)
        #expect(try messages.user(id: "u1") == ChatUser(id: "u1", name: nil, lastActive: nil))
        let parameters = ParameterSet(k0: 1.5, alpha: 0.5, m: 2)
        #expect(
            try messages.thread(id: "t1")
                == ChatThread(id: "t1", title: "", createdAt: epoch, updatedAt: epoch, parameters: parameters))
        #expect(
            try messages.message(id: "m1")
                == Message(
                    id: "m1", threadId: "", userId: "", content: "", phase: "", createdAt: epoch,
                    approvalStatus: .pending))
        let change = try #require(try messages.parameterHistory(ofThread: "t1").first)
        #expect(change.timestamp == epoch && change.eventType == "" && change.parameters == parameters)
    }

    @Test func photoRowsReadTheirListsAndTimesAsStored() throws {
        let photos = try PhotoStore(VecSyncDatabase.inMemory(), dimensions: 4)
        try photos.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO photos (source_id, capture_date, latitude, objects, tags, mood)
                    VALUES ('p1', 1500, 35.5, '["torii", "lantern"]', 'not json', 'calm');
                    INSERT INTO notes (id, photo_id) VALUES ('n1', 'p1');
                    INSERT INTO albums (id, created_at, updated_at) VALUES ('a1', 2000, 3000);
                    """)
        }
        #expect(
            try photos.photo(sourceId: "p1")
                == Photo(
                    sourceId: "p1", captureDate: Date(timeIntervalSince1970: 1.5), latitude: 35.5,
                    objects: ["torii", "lantern"], tags: [], mood: "calm"))
        let epoch = Date(timeIntervalSince1970: 0)
        #expect(
            try photos.note(id: "n1") == Note(id: "n1", photoId: "p1", content: "", createdAt: epoch, updatedAt: epoch))
        #expect(
            try photos.album(id: "a1")
                == Album(id: "a1", name: "", createdAt: Date(timeIntervalSince1970: 2), updatedAt: Date(timeIntervalSince1970: 3)))
    }

    @Test("a NULL key column is a damaged row: reading it throws rather than giving a record with an empty key")
    func nullKeyColumnThrows() throws {
        let photos = try PhotoStore(VecSyncDatabase.inMemory(), dimensions: 4)
        try photos.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO photos (source_id) VALUES ('p1');
                    INSERT INTO notes (id, photo_id) VALUES (NULL, 'p1');
                    """)
        }
        #expect(throws: (any Error).self) { try photos.notes(forPhoto: "p1") }
    }
}

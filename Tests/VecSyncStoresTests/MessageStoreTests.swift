import Foundation
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncStores

@Suite("MessageStore: the Choir schema, parameters and filtered recall")
struct MessageStoreTests {
    static let dims = 16

    func store() throws -> MessageStore {
        let clock = SteppingClock()
        return try MessageStore(VecSyncDatabase.inMemory(), dimensions: Self.dims, clock: { clock.now() })
    }

    /// `sql/choir.sql` shows the schema people run in the shell: it must be the store's own.
    @Test func theShellScriptCreatesTheStoresSchema() throws {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("sql/choir.sql")
        let text = try String(contentsOf: script, encoding: .utf8)
        let start = try #require(text.range(of: "CREATE TABLE IF NOT EXISTS users"))
        let end = try #require(text.range(of: "-- End of the schema."))
        let expected = MessageStore.schemaSQL(dimensions: 1536) + "\n"
        #expect(
            String(text[start.lowerBound..<end.lowerBound]) == expected,
            "sql/choir.sql's schema differs from MessageStore.schemaSQL(dimensions: 1536); paste this in:\n\(expected)")
    }

    @Test func createsTheChoirSchemaWithTheVectorIndex() throws {
        let messages = try store()
        try messages.writer.read { db in
            for table in ["users", "threads", "messages", "parameter_history"] {
                #expect(try db.tableExists(table), "\(table)")
            }
            let index = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_master WHERE name = 'messages_embedding_idx'")
            #expect(index?.contains("libsql_vector_idx") == true)
            let type = try db.columns(in: "messages").first { $0.name == "embedding" }?.type
            #expect(type == "F32_BLOB(16)")
        }
    }

    @Test func reopeningWithAnotherDimensionIsRefused() throws {
        let db = try VecSyncDatabase.inMemory()
        _ = try MessageStore(db, dimensions: 16)
        #expect(
            throws: VecSyncError.schemaMismatch(
                table: "messages", reason: "embedding is declared F32_BLOB(16), expected F32_BLOB(1536)")
        ) {
            try MessageStore(db, dimensions: 1536)
        }
    }

    @Test func addMessageRefusesAWrongDimensionWithExpectedAndGot() throws {
        let messages = try store()
        try messages.createThread(id: "t1", title: "Trip", k0: 1, alpha: 1.5, m: 1)
        #expect(throws: VecSyncError.dimensionMismatch(expected: Self.dims, got: 3)) {
            try messages.addMessage(
                id: "m1", threadId: "t1", userId: "u1", content: "x", embedding: [1, 2, 3], phase: .action)
        }
        #expect(throws: VecSyncError.notFound(kind: "thread", key: "nope")) {
            try messages.addMessage(
                id: "m1", threadId: "nope", userId: "u1", content: "x", embedding: nil, phase: .action)
        }
    }

    @Test func approvalMovesParametersByTheClampedRulesAndRecordsHistory() throws {
        let messages = try store()
        try messages.createThread(id: "t1", title: "Trip", k0: 1, alpha: 1.5, m: 1)
        try messages.addMessage(id: "m1", threadId: "t1", userId: "u1", content: "a", embedding: nil, phase: .action)
        try messages.addMessage(id: "m2", threadId: "t1", userId: "u1", content: "b", embedding: nil, phase: .action)
        let approved = try messages.setApprovalStatus(.approved, ofMessage: "m1")
        #expect(abs(approved.parameters.k0 - 1.05) < 1e-12)
        #expect(abs(approved.parameters.alpha - 1.52) < 1e-12)
        #expect(abs(approved.parameters.m - 0.99) < 1e-12)
        // Approving again changes nothing.
        #expect(try messages.setApprovalStatus(.approved, ofMessage: "m1").parameters == approved.parameters)
        let refused = try messages.setApprovalStatus(.refused, ofMessage: "m2")
        #expect(abs(refused.parameters.k0 - 0.97) < 1e-12)
        #expect(abs(refused.parameters.alpha - 1.49) < 1e-12)
        #expect(abs(refused.parameters.m - 1.01) < 1e-12)
        #expect(try messages.thread(id: "t1")?.parameters == refused.parameters)
        let events = try messages.parameterHistory(ofThread: "t1").map(\.eventType)
        #expect(events == ["thread_creation", "message_approved", "message_refused"])
        #expect(try messages.message(id: "m2")?.approvalStatus == .refused)
    }

    @Test func parametersStayWithinTheirRanges() {
        var p = ParameterSet(k0: 9.99, alpha: 1.99, m: 0.505)
        for _ in 0..<10 { p = p.adjusted(for: .approved) }
        #expect(p == ParameterSet(k0: 10, alpha: 2, m: 0.5))
        var q = ParameterSet(k0: 0.15, alpha: 0.12, m: 4.99)
        for _ in 0..<10 { q = q.adjusted(for: .refused) }
        #expect(q == ParameterSet(k0: 0.1, alpha: 0.1, m: 5))
        #expect(q.adjusted(for: .pending) == q)
    }

    @Test func filteredSimilarReturnsExactlyLimitRowsWhenEnoughMatch() throws {
        var topics = TopicEmbeddings(dimensions: Self.dims, seed: 0x5EED_0201)
        print("seed \(0x5EED_0201)")
        let messages = try store()
        try messages.createThread(id: "travel", title: "Travel", k0: 1, alpha: 1.5, m: 1)
        try messages.createThread(id: "other", title: "Other", k0: 1, alpha: 1.5, m: 1)
        // 300 messages about temples in another thread sit nearest to the query; the
        // travel thread has 12 temple messages, 6 approved, and 40 about food.
        for i in 0..<300 {
            try messages.addMessage(
                id: "o\(i)", threadId: "other", userId: "u2", content: "temple \(i)",
                embedding: topics.item("temples", noise: 0.05), phase: .experience)
        }
        for i in 0..<12 {
            try messages.addMessage(
                id: "t\(i)", threadId: "travel", userId: "u1", content: "temple \(i)",
                embedding: topics.item("temples", noise: 0.4), phase: .experience)
            if i.isMultiple(of: 2) { try messages.setApprovalStatus(.approved, ofMessage: "t\(i)") }
        }
        for i in 0..<40 {
            try messages.addMessage(
                id: "f\(i)", threadId: "travel", userId: "u1", content: "food \(i)",
                embedding: topics.item("food"), phase: .experience)
        }
        let query = topics.centre("temples")
        let five = try messages.similar(to: query, inThread: "travel", approvedOnly: true, limit: 5)
        #expect(five.count == 5)
        #expect(five.allSatisfy { $0.message.threadId == "travel" && $0.message.approvalStatus == .approved })
        #expect(five.map(\.distance) == five.map(\.distance).sorted())
        // Exactly the nearest approved travel messages, by a brute-force check.
        var expected: [(String, Float)] = []
        for i in stride(from: 0, to: 12, by: 2) {
            if let v = try messages.embedding(ofMessage: "t\(i)") {
                expected.append(("t\(i)", v.cosineDistance(to: query)))
            }
        }
        // Compared within float rounding: BLAS and this loop may order near-ties differently.
        #expect(StorePropertyTests.matches(five.map { ($0.message.id, $0.distance) }, expected, limit: 5))

        // All 6 approved when asking for 10; 10 of 52 without the approval filter.
        #expect(try messages.similar(to: query, inThread: "travel", approvedOnly: true, limit: 10).count == 6)
        let ten = try messages.similar(to: query, inThread: "travel", limit: 10)
        #expect(ten.count == 10)
        #expect(ten.allSatisfy { $0.message.content.hasPrefix("temple") })
        #expect(try messages.similar(to: query, inThread: "nobody", limit: 3).isEmpty)
        // Unfiltered recall goes to the other thread.
        #expect(try messages.similar(to: query, limit: 3).allSatisfy { $0.message.threadId == "other" })
    }

    @Test func experiencesCarryTheParametersInForceWhenWritten() throws {
        let messages = try store()
        try messages.createThread(id: "t1", title: "Trip", k0: 1, alpha: 1.5, m: 1)
        try messages.addMessage(
            id: "e1", threadId: "t1", userId: "u1", content: "first", embedding: nil, phase: .experience)
        try messages.setApprovalStatus(.approved, ofMessage: "e1")
        try messages.addMessage(
            id: "a1", threadId: "t1", userId: "u1", content: "action", embedding: nil, phase: .action)
        try messages.addMessage(
            id: "e2", threadId: "t1", userId: "u1", content: "second", embedding: nil, phase: .experience)
        let experiences = try messages.experiences(inThread: "t1")
        #expect(experiences.map(\.message.id) == ["e2", "e1"])
        #expect(experiences[1].priorParameters == ParameterSet(k0: 1, alpha: 1.5, m: 1))
        #expect(experiences[0].priorParameters == ParameterSet(k0: 1, alpha: 1.5, m: 1).adjusted(for: .approved))
    }

    @Test func removingAnEmbeddingTakesTheMessageOutOfRecall() throws {
        var topics = TopicEmbeddings(dimensions: Self.dims, seed: 0x5EED_0202)
        let messages = try store()
        try messages.createThread(id: "t", title: "T", k0: 1, alpha: 1, m: 1)
        for i in 0..<5 {
            try messages.addMessage(
                id: "m\(i)", threadId: "t", userId: "u", content: "\(i)", embedding: topics.item("a"), phase: .action)
        }
        let nearest = try messages.similar(to: topics.centre("a"), inThread: "t", limit: 1)[0].message.id
        try messages.setEmbedding(nil, ofMessage: nearest)
        let after = try messages.similar(to: topics.centre("a"), inThread: "t", limit: 5)
        #expect(after.count == 4 && !after.contains { $0.message.id == nearest })
        try messages.deleteMessage(id: "m0")
        #expect(try messages.similar(to: topics.centre("a"), limit: 5).count == (nearest == "m0" ? 4 : 3))
    }
}

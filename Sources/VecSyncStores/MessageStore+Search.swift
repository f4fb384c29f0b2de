import Foundation
import VecSyncCore

extension MessageStore {
    /// The messages of a thread nearest to `query` by cosine distance, nearest first;
    /// with `approvedOnly`, only approved ones. Exactly `limit` rows come back whenever at
    /// least `limit` messages match.
    ///
    /// How: `vector_top_k` ranks the whole index and has no filter inside it, so the
    /// Choir query (`vector_top_k(…, limit) JOIN messages WHERE thread_id = ?`) returns
    /// fewer than `limit` rows as soon as some of the nearest messages belong to other
    /// threads. Here the matching rows are counted first (an index lookup on
    /// `messages(thread_id, approval_status)`), then `vector_top_k` is asked for a k
    /// larger than `limit`, its hits are filtered, and k grows fourfold until enough hits
    /// match or the index returns fewer than k rows (it is exhausted). `vector_top_k` is
    /// exact, so the answer is exactly the filtered top `limit`, ties ordered by rowid.
    /// Each round is one scan of the index; a filter that matches a fraction f of the
    /// messages needs about log₄(1 / (8f)) + 1 rounds.
    public func similar(
        to query: Vector, inThread threadId: String, approvedOnly: Bool = false,
        limit: Int
    ) throws -> [(message: Message, distance: Double)] {
        try query.validate(dimensions: dimensions)
        try Self.checkLimit(limit)
        return try read { db in
            let approvedClause = approvedOnly ? " AND m.approval_status = 'approved'" : ""
            let matching =
                try Int.fetchOne(
                    db,
                    sql:
                        "SELECT count(*) FROM messages AS m WHERE m.thread_id = ?\(approvedClause) AND m.embedding IS NOT NULL",
                    arguments: [threadId]) ?? 0
            let wanted = Swift.min(limit, matching)
            guard wanted > 0 else { return [] }
            return try Self.filteredTopK(
                db, query: query, wanted: wanted, firstK: Swift.max(limit * 8, 64),
                filterSQL: "m.thread_id = ?\(approvedClause)", filterArguments: [threadId])
        }
    }

    /// The messages of every thread nearest to `query`, nearest first.
    public func similar(to query: Vector, limit: Int) throws -> [(message: Message, distance: Double)] {
        try query.validate(dimensions: dimensions)
        try Self.checkLimit(limit)
        return try read { db in
            try Self.filteredTopK(db, query: query, wanted: limit, firstK: limit, filterSQL: "1", filterArguments: [])
        }
    }

    /// The experience-phase messages of a thread, newest first, each with the parameters
    /// in force when it was written: the latest `parameter_history` row at or before its
    /// creation time.
    public func experiences(inThread threadId: String, limit: Int = 10) throws -> [Experience] {
        try Self.checkLimit(limit)
        return try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.id, m.thread_id, m.user_id, m.content, m.phase, m.created_at, m.approval_status,
                           p.k0, p.alpha, p.m
                    FROM messages AS m
                    JOIN parameter_history AS p ON p.id = (
                      SELECT h.id FROM parameter_history AS h
                      WHERE h.thread_id = m.thread_id AND h.timestamp <= m.created_at
                      ORDER BY h.timestamp DESC, h.id DESC LIMIT 1)
                    WHERE m.thread_id = ? AND m.phase = ?
                    ORDER BY m.created_at DESC, m.id DESC
                    LIMIT ?
                    """,
                arguments: [threadId, MessagePhase.experience.rawValue, limit])
            return try rows.map { row in
                Experience(
                    message: try Message(row: row),
                    priorParameters: try row.parameters())
            }
        }
    }

    /// Asks `vector_top_k` for growing k until `wanted` of its hits pass the filter or the
    /// index is exhausted. The hits go back to SQL as a bound JSON array of rowids.
    static func filteredTopK(
        _ db: Database, query: Vector, wanted: Int, firstK: Int,
        filterSQL: String, filterArguments: StatementArguments
    ) throws
        -> [(message: Message, distance: Double)]
    {
        var k = firstK
        while true {
            let hits = try db.vectorTopK(index: indexName, near: query, k: k)
            let rowids = "[" + hits.map { String($0.key) }.joined(separator: ",") + "]"
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.id, m.thread_id, m.user_id, m.content, m.phase, m.created_at, m.approval_status,
                           CAST(j.key AS INTEGER) AS position
                    FROM json_each(?) AS j JOIN messages AS m ON m.rowid = j.value
                    WHERE \(filterSQL)
                    ORDER BY j.key
                    LIMIT ?
                    """,
                arguments: [rowids] + filterArguments + [wanted])
            if rows.count >= wanted || hits.count < k {
                return try rows.map { row in
                    let position: Int = try row.decode(forColumn: "position")
                    return (message: try Message(row: row), distance: hits[position].distance)
                }
            }
            k *= 4
        }
    }

    static func checkLimit(_ limit: Int) throws {
        guard limit > 0 else {
            throw VecSyncError.invalidArgument(name: "limit", value: "\(limit)", reason: "must be at least 1")
        }
    }
}

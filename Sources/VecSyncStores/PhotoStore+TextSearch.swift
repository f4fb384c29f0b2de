import Foundation
import VecSyncCore

extension PhotoStore {
    /// Full-text search over description, tags, objects, OCR text and notes (FTS5, BM25
    /// ranking), best first. Every word must appear (prefixes do not match). `rank` is BM25's
    /// score: smaller is better.
    ///
    /// The words are quoted before they reach FTS5, so any text is a valid query.
    public func search(text: String, limit: Int) throws -> [(photo: Photo, rank: Double)] {
        try Self.checkLimit(limit)
        guard let match = Self.matchExpression(text, joinedBy: " ") else { return [] }
        return try read { db in try Self.textSearch(db, match: match, limit: limit) }
    }

    /// Hybrid search: the FTS5 ranking of `text` (any of its words) and the vector ranking
    /// of `query`, fused by reciprocal rank fusion — each photo scores Σ 1 / (60 + rank) over
    /// the rankings it appears in — best first. A photo found by both ranks above a photo
    /// found by one.
    public func search(text: String, similarTo query: Vector, limit: Int) throws -> [(photo: Photo, score: Double)] {
        try query.validate(dimensions: dimensions)
        try Self.checkLimit(limit)
        let depth = Swift.max(limit * 3, 50)
        let index = vectorIndex
        return try read { db in
            let vector = try Self.photos(db, for: index.search(db, near: query, limit: depth, as: String.self))
            let textual =
                try Self.matchExpression(text, joinedBy: " OR ")
                .map { try Self.textSearch(db, match: $0, limit: depth) } ?? []
            var photos: [String: Photo] = [:]
            var scores: [String: Double] = [:]
            for (rank, hit) in vector.enumerated() {
                photos[hit.photo.sourceId] = hit.photo
                scores[hit.photo.sourceId, default: 0] += 1 / Double(Self.fusionConstant + rank + 1)
            }
            for (rank, hit) in textual.enumerated() {
                photos[hit.photo.sourceId] = hit.photo
                scores[hit.photo.sourceId, default: 0] += 1 / Double(Self.fusionConstant + rank + 1)
            }
            return scores.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .prefix(limit)
                .compactMap { entry in photos[entry.key].map { (photo: $0, score: entry.value) } }
        }
    }

    /// The k of reciprocal rank fusion (60, as in Cormack et al. and most search engines).
    static let fusionConstant = 60

    static func textSearch(_ db: Database, match: String, limit: Int) throws -> [(photo: Photo, rank: Double)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(Photo.columns("p")), bm25(photos_fts) AS rank
                FROM photos_fts AS f JOIN photos AS p ON p.rowid = f.rowid AND p.source_id = f.source_id
                WHERE photos_fts MATCH ? ORDER BY rank, p.source_id LIMIT ?
                """,
            arguments: [match, limit]
        ).map { row in (photo: try Photo(row: row), rank: try row.decode(forColumn: "rank")) }
    }

    /// An FTS5 query of the words of `text`, each quoted as a string, or nil if it has none.
    static func matchExpression(_ text: String, joinedBy separator: String) -> String? {
        let words = text.split { !($0.isLetter || $0.isNumber) }.map {
            "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return words.isEmpty ? nil : words.joined(separator: separator)
    }
}

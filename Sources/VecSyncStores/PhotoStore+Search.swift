import Foundation
import VecSyncCore

extension PhotoStore {
    /// The photos nearest to `query` by cosine distance, nearest first, among those passing
    /// `filter`. Exactly `limit` photos come back whenever at least `limit` match.
    ///
    /// How, and why it stays exact under filters:
    /// - Filters on capture date, scene type and mood are metadata columns of `photos_vec`,
    ///   applied by vec0 during its scan: `… MATCH ? AND k = ? AND capture_date > ?`.
    /// - Album membership is many-to-many and cannot be a vec0 column. An album filter turns
    ///   the search around: the album's photos (an index lookup on `album_photos`) are
    ///   scored one by one with `vector_distance_cos` and sorted. That is the exact answer,
    ///   and an album is small next to the library, so the scan is short.
    public func search(similarTo query: Vector, limit: Int, filter: PhotoFilter = .none) throws
        -> [(photo: Photo, distance: Double)]
    {
        try query.validate(dimensions: dimensions)
        try Self.checkLimit(limit)
        let index = vectorIndex
        return try read { db in
            if filter.involvesAlbums {
                return try Self.scanSearch(db, query: query, limit: limit, filter: filter)
            }
            let matches = try index.search(
                db, near: query, limit: limit, where: Self.vectorFilters(filter), as: String.self)
            return try Self.photos(db, for: matches)
        }
    }

    /// The photos most similar to a stored photo, nearest first, the photo itself excluded.
    /// Throws ``VecSyncCore/VecSyncError/notFound(kind:key:)`` when the photo has no
    /// embedding.
    public func similar(toPhoto sourceId: String, limit: Int) throws -> [(photo: Photo, distance: Double)] {
        try Self.checkLimit(limit)
        guard let embedding = try embedding(ofPhoto: sourceId) else {
            throw VecSyncError.notFound(kind: "photo embedding", key: sourceId)
        }
        return Array(
            try search(similarTo: embedding, limit: limit + 1).filter { $0.photo.sourceId != sourceId }.prefix(limit))
    }

    // MARK: - Internals

    static func vectorFilters(_ filter: PhotoFilter) -> [VectorFilter] {
        filter.conditions.compactMap { condition in
            switch condition {
            case .takenAfter(let date): .greater("capture_date", date.millisecondsSince1970)
            case .takenBefore(let date): .less("capture_date", date.millisecondsSince1970)
            case .sceneType(let scene): .equal("scene_type", scene)
            case .mood(let mood): .equal("mood", mood)
            case .albumName, .albumId: nil
            }
        }
    }

    /// Exact scan of the photos selected by `filter` (which names an album).
    static func scanSearch(_ db: Database, query: Vector, limit: Int, filter: PhotoFilter) throws
        -> [(photo: Photo, distance: Double)]
    {
        var sql = """
            SELECT \(Photo.columns("p")), vector_distance_cos(p.embedding, ?) AS distance
            FROM photos AS p WHERE p.embedding IS NOT NULL
            """
        var arguments: StatementArguments = [query]
        for condition in filter.conditions {
            switch condition {
            case .albumName(let name):
                sql += """
                     AND p.source_id IN (SELECT ap.photo_id FROM album_photos AS ap
                                         JOIN albums AS a ON a.id = ap.album_id WHERE a.name = ?)
                    """
                arguments += [name]
            case .albumId(let id):
                sql += " AND p.source_id IN (SELECT ap.photo_id FROM album_photos AS ap WHERE ap.album_id = ?)"
                arguments += [id]
            case .takenAfter(let date):
                sql += " AND p.capture_date > ?"
                arguments += [date.millisecondsSince1970]
            case .takenBefore(let date):
                sql += " AND p.capture_date < ?"
                arguments += [date.millisecondsSince1970]
            case .sceneType(let scene):
                sql += " AND p.scene_type = ?"
                arguments += [scene]
            case .mood(let mood):
                sql += " AND p.mood = ?"
                arguments += [mood]
            }
        }
        sql += " ORDER BY distance, p.source_id LIMIT ?"
        arguments += [limit]
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            (photo: try Photo(row: row), distance: try row.decode(forColumn: "distance"))
        }
    }

    /// The photos of `matches`, in their order, each with its distance.
    static func photos(_ db: Database, for matches: [VectorMatch<String>]) throws -> [(photo: Photo, distance: Double)]
    {
        guard !matches.isEmpty else { return [] }
        let keys = try JSONEncoder().encode(matches.map(\.key))
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT \(Photo.columns("p")), CAST(j.key AS INTEGER) AS position
                FROM json_each(?) AS j JOIN photos AS p ON p.source_id = j.value ORDER BY j.key
                """,
            arguments: [String(decoding: keys, as: UTF8.self)])
        return try rows.map { row in
            let position: Int = try row.decode(forColumn: "position")
            return (photo: try Photo(row: row), distance: matches[position].distance)
        }
    }

    static func checkLimit(_ limit: Int) throws {
        guard limit > 0 else {
            throw VecSyncError.invalidArgument(name: "limit", value: "\(limit)", reason: "must be at least 1")
        }
    }
}

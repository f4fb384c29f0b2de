import Foundation
import VecSyncCore
import VecSyncTestSupport

/// Helpers shared by the host suites.
enum HostFixtures {
    /// A fresh in-memory database with the extension.
    static func database() throws -> VecSyncDatabase {
        try VecSyncDatabase.inMemory()
    }

    /// A canonical table `items(id TEXT PRIMARY KEY, embedding F32_BLOB(n), category TEXT,
    /// score INTEGER)` with `count` random rows, and its vec0 index (not yet created).
    static func itemsTable(_ db: Database, dimensions: Int, count: Int, using rng: inout ExtensionRandom) throws
        -> VectorIndex
    {
        try db.execute(
            sql: """
                CREATE TABLE items (id TEXT PRIMARY KEY, embedding F32_BLOB(\(dimensions)), category TEXT, score INTEGER)
                """)
        for i in 0..<count {
            let id = String(format: "item-%04d", i)
            let embedding = Vector.random(dimensions: dimensions, using: &rng)
            let category = ["red", "green", "blue"][i % 3]
            let arguments: StatementArguments = [id, embedding, category, i]
            try db.execute(
                sql: "INSERT INTO items (id, embedding, category, score) VALUES (?, ?, ?, ?)", arguments: arguments)
        }
        return VectorIndex(
            table: "items", primaryKey: "id", embeddingColumn: "embedding", dimensions: dimensions,
            metric: .cosine, name: "items_vec",
            metadata: [.init("category", .text), .init("score", .integer)])
    }

    /// Runs `body` in a write transaction of a fresh in-memory database holding
    /// ``itemsTable(_:dimensions:count:using:)``'s `count` rows, with the generator seeded
    /// from `seed` (or `$VECSYNC_SEED`) that drew them.
    static func withItems(
        dimensions: Int, count: Int, seed: UInt64,
        _ body: (Database, VectorIndex, inout ExtensionRandom) throws -> Void
    ) throws {
        var rng = ExtensionRandom(defaultSeed: seed)
        try database().write { db in
            let index = try itemsTable(db, dimensions: dimensions, count: count, using: &rng)
            try body(db, index, &rng)
        }
    }

    /// Runs `body` in a write transaction of a fresh in-memory database holding an empty
    /// table `name(id <keyType> PRIMARY KEY, embedding F32_BLOB(4))` and its vec0 index
    /// `<name>_vec`, created, with a generator seeded from `seed` (or `$VECSYNC_SEED`).
    static func withIndexedTable(
        _ name: String, keyType: String, seed: UInt64,
        _ body: (Database, VectorIndex, inout ExtensionRandom) throws -> Void
    ) throws {
        var rng = ExtensionRandom(defaultSeed: seed)
        try database().write { db in
            try db.execute(sql: "CREATE TABLE \(name) (id \(keyType) PRIMARY KEY, embedding F32_BLOB(4))")
            let index = VectorIndex(table: name, dimensions: 4, name: name + "_vec")
            try index.create(db)
            try body(db, index, &rng)
        }
    }

    /// Runs `body` with the engine's merging flag set, as a merge writes: the index triggers
    /// stay silent, and the index learns of the rows only from a refresh.
    static func whileMerging(_ db: Database, _ body: () throws -> Void) throws {
        try db.execute(sql: "REPLACE INTO vecsync_state(key, value) VALUES ('merging', 1)")
        try body()
        try db.execute(sql: "REPLACE INTO vecsync_state(key, value) VALUES ('merging', 0)")
    }

    /// The exact nearest keys by brute force in Swift, ties by key.
    static func bruteForce(_ rows: [(String, Vector)], query: Vector, metric: DistanceMetric, k: Int) -> [String] {
        let scored: [(key: String, distance: Float)] = rows.map { row in
            (key: row.0, distance: row.1.distance(to: query, metric: metric))
        }
        let sorted = scored.sorted { a, b in a.distance != b.distance ? a.distance < b.distance : a.key < b.key }
        return sorted.prefix(k).map { $0.key }
    }

    /// Whether `got` is a correct top-k answer for `query` over `rows`: k rows (or all),
    /// sorted, each with its true distance, and none nearer left out. Float rounding differs
    /// between BLAS and this loop, so distances compare within `tolerance` and rows whose
    /// distance ties the k-th within it may be swapped.
    static func isExactTopK<Key>(
        _ got: [VectorMatch<Key>], rows: [(Key, Vector)], query: Vector,
        metric: DistanceMetric, k: Int, tolerance: Double = 1e-5
    ) -> Bool {
        let truth: [(key: Key, distance: Double)] = rows.map { row in
            (key: row.0, distance: Double(row.1.distance(to: query, metric: metric)))
        }
        let distances = truth.map(\.distance).sorted()
        guard got.count == Swift.min(k, rows.count) else { return false }
        for (i, match) in got.enumerated() {
            guard let own = truth.first(where: { $0.key == match.key }) else { return false }
            if abs(own.distance - match.distance) > tolerance { return false }
            if abs(distances[i] - match.distance) > tolerance { return false }
        }
        return Set(got.map(\.key)).count == got.count
    }
}

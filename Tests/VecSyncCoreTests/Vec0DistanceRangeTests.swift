import Foundation
import GRDB
import Testing
import VecSyncCore

/// Bounds on distance inside a KNN query (`distance > ?`, `>=`, `<`, `<=`) are applied by
/// the search itself, so a page of k rows after the last one seen is a full page.
@Suite("vec0 KNN with distance bounds")
struct Vec0DistanceRangeTests {
    @Test(
        "Paging with distance > last visits every row once, in order, for each metric",
        arguments: ["l2", "cosine", "dot", "l1"])
    func pagingVisitsEveryRow(metric: String) throws {
        var random = ExtensionRandom(defaultSeed: 0x5eed_0120)
        let queue = try DatabaseQueue(configuration: .vecSync())
        try queue.write { db in
            try db.execute(
                sql: "CREATE VIRTUAL TABLE p USING vec0(embedding float[6] distance_metric=\(metric), chunk_size=16)")
            for row in 1...150 {
                let v = Vector((0..<6).map { _ in Float.random(in: -1...1, using: &random) })
                try db.execute(sql: "INSERT INTO p(rowid, embedding) VALUES (?, ?)", arguments: [row, v])
            }
        }
        let query = Vector((0..<6).map { _ in Float.random(in: -1...1, using: &random) })
        try queue.read { db in
            let all = try Row.fetchAll(
                db, sql: "SELECT rowid, distance FROM p WHERE embedding MATCH ? AND k = 150",
                arguments: [query]
            ).map { row -> (Int64, Double) in (row[0], row[1]) }
            var seen: [Int64] = []
            var last: Double? = nil
            while true {
                let page = try Row.fetchAll(
                    db,
                    sql: last == nil
                        ? "SELECT rowid, distance FROM p WHERE embedding MATCH ? AND k = 7"
                        : "SELECT rowid, distance FROM p WHERE embedding MATCH ? AND k = 7 AND distance > ?",
                    arguments: last == nil ? [query] : [query, last!])
                if page.isEmpty { break }
                #expect(
                    page.count == 7 || seen.count + page.count == 150,
                    "a short page before the end (seed \(random.seed))")
                for row in page {
                    let rowid: Int64 = row[0]
                    seen.append(rowid)
                }
                if let final = page.last {
                    let distance: Double = final[1]
                    last = distance
                }
            }
            // Distances of random vectors are distinct, so pages neither skip nor repeat.
            #expect(seen == all.map(\.0), "paging order differs from one full query (seed \(random.seed))")
        }
    }
}

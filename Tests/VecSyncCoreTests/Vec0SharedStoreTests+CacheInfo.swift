import Foundation
import GRDB

extension Vec0SharedStoreTests {
    /// What `vecsync_cache_info('v')` reports of the process-wide copy of `v`.
    struct CacheInfo: Decodable {
        var generation: Int
        var rows: Int
        var taken: Int
        var replayed: Int
        var loaded: Int
        var processWide: Bool
        var streamed: Bool

        enum CodingKeys: String, CodingKey {
            case generation, rows, taken, replayed, loaded, streamed
            case processWide = "process_wide"
        }
    }

    /// `v`'s copy as this connection sees it.
    static func info(_ db: Database) throws -> CacheInfo {
        let text = try String.fetchOne(db, sql: "SELECT vecsync_cache_info('v')") ?? "{}"
        return try JSONDecoder().decode(CacheInfo.self, from: Data(text.utf8))
    }
}

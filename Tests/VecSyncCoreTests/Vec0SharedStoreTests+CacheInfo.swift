import Foundation
import GRDB

extension Vec0SharedStoreTests {
    /// What `vecsync_cache_info('v')` reports of the process-wide copy of `v`.
    struct CacheInfo: Decodable {
        var generation, rows: Int
        /// Snapshots this connection took from the process, replayed from the log, loaded whole.
        var taken, replayed, loaded: Int
        /// Shared by the process; streamed (no vectors in memory).
        var processWide, streamed: Bool

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

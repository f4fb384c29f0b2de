import GRDB
import VecSyncCore

extension Replica {
    /// Records a derived FTS5 or libSQL vector index of a tracked table, so every merge
    /// refreshes it for the rows it changed. `vec0` indexes need no registration: VecSyncCore's
    /// `VectorIndex.create(_:)` records them and merges find them.
    public func register(_ index: DerivedIndex) throws {
        try SyncError.wrap {
            try writer.write { db in
                guard try Self.trackedTables(db).contains(where: { $0.name.lowercased() == index.table.lowercased() }) else {
                    throw SyncError.tableNotTracked(table: index.table)
                }
                guard try db.tableExists(index.name) || index.kind == .libsqlVectorIndex else {
                    throw SyncError.derivedIndex(name: index.name, reason: "no such table; create the FTS5 table first")
                }
                try DerivedIndexRegistry.register(db, index)
            }
        }
    }

    /// The derived indexes of tracked tables: registered FTS5 and libSQL indexes, and the
    /// names of VecSyncCore's vec0 indexes.
    public func derivedIndexes() throws -> (indexes: [DerivedIndex], vectorIndexes: [VectorIndex]) {
        try SyncError.wrap {
            try writer.read { db in
                (try DerivedIndexRegistry.registered(db), try VectorIndex.registered(in: db))
            }
        }
    }

    /// Checks every derived index against its table; returns, per index name, the number
    /// of rows out of step (0 when it is in step).
    public func verifyDerivedIndexes() throws -> [String: Int] {
        try SyncError.wrap {
            try writer.read { db in
                let tables = try Self.trackedTables(db, checkingSchema: false)
                var result: [String: Int] = [:]
                for index in try VectorIndex.registered(in: db) {
                    let report = try index.verify(db)
                    result[index.name] = report.missing.count + report.stale.count + report.extra.count + report.invalid.count
                }
                for index in try DerivedIndexRegistry.registered(db) {
                    guard let source = tables.first(where: { $0.name.lowercased() == index.table.lowercased() }) else { continue }
                    result[index.name] = try index.verify(db, source: source)
                }
                return result
            }
        }
    }

    /// Rebuilds every derived index from its table, in one transaction.
    public func rebuildDerivedIndexes() throws {
        try SyncError.wrap {
            try writer.write { db in
                let tables = try Self.trackedTables(db, checkingSchema: false)
                for index in try VectorIndex.registered(in: db) { try index.rebuild(db) }
                for index in try DerivedIndexRegistry.registered(db) {
                    guard let source = tables.first(where: { $0.name.lowercased() == index.table.lowercased() }) else { continue }
                    try index.rebuild(db, source: source)
                }
            }
        }
    }
}

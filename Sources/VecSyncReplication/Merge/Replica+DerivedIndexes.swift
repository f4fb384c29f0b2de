import GRDB
import VecSyncCore

extension Replica {
    /// Records a derived FTS5 or libSQL vector index of a tracked table in the database's
    /// ``DerivedIndexCatalogue``, so every merge refreshes it for the rows it changed.
    /// `vec0` indexes need no registration: VecSyncCore's `VectorIndex.create(_:)` records
    /// them, and libSQL indexes are found in the schema.
    public func register(_ index: DerivedIndex) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                guard try Self.trackedTables(db).contains(where: { $0.name.lowercased() == index.table.lowercased() })
                else {
                    throw VecSyncError.tableNotTracked(table: index.table)
                }
                guard try db.tableExists(index.name) || index.kind == .libsqlVectorIndex else {
                    throw VecSyncError.derivedIndex(name: index.name, reason: "no such table; create the FTS5 table first")
                }
                try DerivedIndexCatalogue.register(index, in: db)
            }
        }
    }

    /// The derived indexes of the database (its ``DerivedIndexCatalogue``): registered FTS5
    /// and libSQL indexes, and VecSyncCore's vec0 indexes.
    public func derivedIndexes() throws -> (indexes: [DerivedIndex], vectorIndexes: [VectorIndex]) {
        try VecSyncError.wrap {
            try writer.read { db in
                let catalogue = try DerivedIndexCatalogue(db)
                return (catalogue.indexes, catalogue.vectorIndexes)
            }
        }
    }

    /// Checks every derived index against its table; returns, per index name, the number
    /// of rows out of step (0 when it is in step).
    public func verifyDerivedIndexes() throws -> [String: Int] {
        try VecSyncError.wrap {
            try writer.read { db in
                var result: [String: Int] = [:]
                for check in try DerivedIndexCatalogue(db).verify(db) { result[check.name] = check.outOfStep }
                return result
            }
        }
    }

    /// Rebuilds every derived index from its table, in one transaction.
    public func rebuildDerivedIndexes() throws {
        try VecSyncError.wrap {
            try writer.write { db in
                try DerivedIndexCatalogue(db).rebuild(db)
            }
        }
    }
}

import Foundation
import GRDB

/// What the extension reports of a vec0 table's ivf lists (`vecsync_index_info`): whether
/// they are trained, how the rows spread over them, how far the table drifted since the
/// last training, and what this connection holds in memory.
public struct IVFStatus: Sendable, Hashable, Decodable {
    /// Whether centroids were trained: before, queries are the exact scan.
    public var trained: Bool
    /// Rows in the table now.
    public var rows: Int
    /// Lists (centroids); 0 before training.
    public var lists: Int
    /// Lists this connection holds in memory.
    public var listsInMemory: Int
    /// Bytes those lists take.
    public var listBytes: Int
    /// Lists given back to the memory budget since the index was last loaded.
    public var listsGivenBack: Int
    /// Rows in the lists (every row once trained).
    public var listedRows: Int
    /// The smallest list's rows.
    public var listMin: Int
    /// The largest list's rows.
    public var listMax: Int
    /// Rows a list on average.
    public var listMean: Double
    /// The lists a query scans unless it says otherwise.
    public var nprobe: Int
    /// Rows at the last training.
    public var trainedRows: Int
    /// Rows now over rows at the last training.
    public var growth: Double
    /// The largest list over the mean.
    public var imbalance: Double
    /// The largest list over the mean at the last training (0 for an index trained by an
    /// earlier version): what the data's own clusters make of the lists.
    public var trainedImbalance: Double
    /// True when the table doubled or fell under 40 % since the last training, or a list
    /// holds over four times the mean and over twice the largest list at the training:
    /// retrain then (``VectorIndex/retrainIVF(_:lists:)``).
    public var retrainSuggested: Bool
    /// False for a table made by an earlier version, until a retrain.
    public var rowidsInLists: Bool
    /// Queries this connection answered from the lists alone since the index was loaded.
    public var queriesWithoutCopy: Int
    /// Whether the lists keep each row's code in the file: coded lists of the current
    /// layout, not declared `stored_codes=0` (``VectorIndex/IVF/storesCodes``).
    public var codesStored: Bool
    /// Rows whose code the file lacks (written since the last training, or every row when
    /// the codes are not stored): reading their list codes their vectors again. A retrain
    /// stores them. 0 for float32 lists.
    public var rowsWithoutCodes: Int
    /// Rows whose code is in their list's pack: the codes a training wrote, a list's as one
    /// blob of the file (rows written since keep theirs elsewhere, or none).
    public var codesInPacks: Int
    /// Bytes of those packs.
    public var packBytes: Int
    /// Codes in the packs that no row uses any more (deleted or rewritten since the last
    /// training): space the next retrain gives back.
    public var stalePackCodes: Int
}

extension Database {
    /// Trains the ivf lists of the vec0 table `table` again from its rows now
    /// (`vecsync_ivf_retrain`): new centroids (`lists` of them, or the declaration's, or
    /// about √rows), every row in its nearest list, in one savepoint that succeeds whole or
    /// leaves the index as it was. Returns the number of lists (0 for an empty table).
    @discardableResult
    public func ivfRetrain(table: String, lists: Int? = nil) throws -> Int {
        try VecSyncError.wrap {
            if let lists {
                return try Int.fetchOne(self, sql: "SELECT vecsync_ivf_retrain(?, ?)", arguments: [table, lists]) ?? 0
            }
            return try Int.fetchOne(self, sql: "SELECT vecsync_ivf_retrain(?)", arguments: [table]) ?? 0
        }
    }

    /// The ivf lists' status of the vec0 table `table` (`vecsync_index_info`). It makes no
    /// copy of the table; with lists not in memory it reads the index's storage to count
    /// them.
    public func ivfStatus(table: String) throws -> IVFStatus {
        let text = try VecSyncError.wrap {
            try String.fetchOne(self, sql: "SELECT vecsync_index_info(?)", arguments: [table])
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            return try decoder.decode(IVFStatus.self, from: Data((text ?? "").utf8))
        } catch {
            throw VecSyncError.derivedIndex(name: table, reason: "unreadable vecsync_index_info: \(text ?? "NULL")")
        }
    }

    /// The share of the exact `k` nearest rows the ivf index of `table` finds when a query
    /// scans `probes` lists (nil: the table's default), over `queries` stored rows taken as
    /// queries (`vecsync_ivf_recall`); nil for an empty table. Each query finds itself,
    /// which flatters small `k` a little.
    public func ivfRecall(table: String, queries: Int = 100, k: Int = 10, probes: Int? = nil) throws -> Double? {
        let probes = try probes ?? ivfStatus(table: table).nprobe
        return try VecSyncError.wrap {
            try Double.fetchOne(
                self, sql: "SELECT vecsync_ivf_recall(?, ?, ?, ?)", arguments: [table, queries, k, probes])
        }
    }
}

extension VectorIndex {
    /// Trains the index's ivf lists again from the rows now (``GRDB/Database/ivfRetrain(table:lists:)``).
    ///
    /// Replicas that hold the same rows train the same lists: call it on each after they
    /// converge, or when ``IVFStatus/retrainSuggested`` says the table drifted.
    @discardableResult
    public func retrainIVF(_ db: Database, lists: Int? = nil) throws -> Int {
        try requireIVF()
        return try db.ivfRetrain(table: name, lists: lists)
    }

    /// The index's ivf lists' status (``GRDB/Database/ivfStatus(table:)``).
    public func ivfStatus(_ db: Database) throws -> IVFStatus {
        try requireIVF()
        return try db.ivfStatus(table: name)
    }

    /// The index's recall at `probes` lists (``GRDB/Database/ivfRecall(table:queries:k:probes:)``).
    public func ivfRecall(_ db: Database, queries: Int = 100, k: Int = 10, probes: Int? = nil) throws -> Double? {
        try requireIVF()
        return try db.ivfRecall(table: name, queries: queries, k: k, probes: probes)
    }

    /// Throws unless the index declares an ivf index.
    func requireIVF() throws {
        guard ivf != nil else {
            throw VecSyncError.invalidArgument(
                name: "index", value: name, reason: "has no ivf index (declare one with VectorIndex.ivf)")
        }
    }
}

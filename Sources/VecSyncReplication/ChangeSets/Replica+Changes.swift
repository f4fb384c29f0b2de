import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// The rows that changed on this replica after local sequence number `since`: every one
    /// of them, in one change set, unless `maximumRows` or `maximumBytes` is given; then one
    /// batch of at most that many rows and about that many bytes (a single larger row travels
    /// alone). A row carries the columns that changed after `since`, so `since` must be what
    /// the receiver has merged of this replica's changes (its cursor for this site).
    ///
    /// The cursor to pass next is the returned ``ChangeSet/through``, never
    /// ``currentSequence()``: a bounded batch runs through the last change it holds, and
    /// changes after it come with the next call. (Ported from CRDT-SQLite, `changes =
    /// getChangesSince(last); last = getClock()` is safe here only because the call without
    /// limits returns everything.) For bounded batches, pass `through` as the next `since`
    /// until the change set is empty, or use ``changeSets(since:excluding:maximumRows:maximumBytes:)``
    /// or ``forEachChangeSet(since:excluding:maximumRows:maximumBytes:_:)`` (one scan, the
    /// batches of ``Options/maximumBatchRows`` and ``Options/maximumBatchBytes``, what
    /// transports push). Rows whose every column carried was last written by a site in
    /// `excluding` (a tombstone: deleted by one) are left out (the peer already has them),
    /// but the cursor still moves past them; a row one of them created carries only the
    /// columns others wrote (an edit made here travels as an edit).
    ///
    /// ```swift
    /// let everything = try replica.changes(since: cursor)
    /// let batch = try replica.changes(since: cursor, maximumRows: 400)
    /// cursor = batch.through                    // not currentSequence()
    /// ```
    public func changes(
        since: Int64, excluding: Set<SiteID> = [], maximumRows: Int? = nil,
        maximumBytes: Int? = nil
    ) throws -> ChangeSet {
        let bounded = maximumRows != nil || maximumBytes != nil
        let limits = bounded ? (rows: max(1, maximumRows ?? .max), bytes: max(1, maximumBytes ?? .max)) : (.max, .max)
        try adoptSchemaChangesIfNeeded()
        return try VecSyncError.wrap {
            try writer.read { db in
                // A batch whose rows were all excluded is empty; read on until a batch has
                // rows or the changes end, so that an empty change set always means "done".
                var start = since
                while true {
                    var scan = try ChangeScan(
                        db, origin: site, since: start, excluding: excluding,
                        rowLimit: limits.rows, byteLimit: limits.bytes, singleBatch: limits.rows < .max)
                    let batch = try scan.nextBatch()
                    if !batch.isEmpty || scan.isFinished || batch.through == start {
                        return ChangeSet(
                            origin: batch.origin, since: since, through: batch.through,
                            acknowledgements: batch.acknowledgements, tables: batch.tables, records: batch.records)
                    }
                    start = batch.through
                }
            }
        }
    }

    /// Hands every change after local sequence number `since` to `body`, in batches bounded
    /// as in ``changes(since:excluding:maximumRows:maximumBytes:)``, made from one scan of
    /// the clock tables in one read transaction; returns the sequence number the last batch
    /// runs through (`since` when nothing changed). Transports use it to push a backlog.
    ///
    /// `body` must not use the replica's database: it runs inside the read.
    ///
    /// ```swift
    /// try replica.forEachChangeSet(since: cursor) { batch in try send(batch.serialized()) }
    /// ```
    @discardableResult
    public func forEachChangeSet(
        since: Int64, excluding: Set<SiteID> = [], maximumRows: Int? = nil,
        maximumBytes: Int? = nil, _ body: (ChangeSet) throws -> Void
    ) throws -> Int64 {
        let limits = batchLimits(maximumRows, maximumBytes)
        try adoptSchemaChangesIfNeeded()
        return try VecSyncError.wrap {
            try writer.read { db in
                var scan = try ChangeScan(
                    db, origin: site, since: since, excluding: excluding,
                    rowLimit: limits.rows, byteLimit: limits.bytes, singleBatch: false)
                var through = since
                while true {
                    let batch = try scan.nextBatch()
                    through = batch.through
                    // A batch whose rows were all excluded is empty but not the end.
                    if batch.isEmpty {
                        if scan.isFinished { return through }
                        continue
                    }
                    try body(batch)
                }
            }
        }
    }

    private func batchLimits(_ rows: Int?, _ bytes: Int?) -> (rows: Int, bytes: Int) {
        (max(1, rows ?? options.maximumBatchRows), max(1, bytes ?? options.maximumBatchBytes))
    }

    /// Bytes a record adds to a change set: its values plus per-column bookkeeping.
    static func estimatedSize(_ record: ChangeSet.Record) -> Int {
        16 + record.key.payloadByteCount
            + record.columns.reduce(0) { $0 + 1 + ($1.map { 7 + $0.value.payloadByteCount } ?? 0) }
    }
}

/// Reads a replica's changes in sequence order and cuts them into change sets.
///
/// A change set `(since, through]` carries every change whose local sequence number lies in
/// that range: each row changed there, with the columns that changed after `since` (all of
/// them when the row was created or re-created after `since`). A row is placed at its
/// first change after `since` — not its last — so a batch cut short by its limits never
/// leaves behind an earlier column change of a row that changed again later: a receiver that
/// merged every change set through N has every change through N.
///
/// The clock tables have no index on `seq` (it would slow every captured write), so each
/// table's changed keys are sorted once by that first change, limited to one batch's worth
/// of rows when only one batch is wanted. The keys of all tables are merged in that order,
/// and each row is then read by its key.
///
/// Parents travel before their children whatever order the tables were tracked in: a row
/// whose foreign key (``TrackedForeignKey``) refers to a row whose first change comes later
/// takes that parent row with it, ahead of it in the same change set (and its parent's
/// parent, and so on); the parent is then not sent again at its own place in this scan. A
/// change set may so carry a few changes past its `through`: they are changes of its
/// origin, which merge the same whenever they arrive.
struct ChangeScan {
    /// One table's changed keys, in sequence order.
    private struct TableKeys {
        let table: TrackedTable
        let keys: RowCursor
        let fetch: Statement
        /// The next key and its sequence number.
        var current: (seq: Int64, key: DatabaseValue)?
        /// Keys read so far, to tell a LIMIT that cut the list from its end.
        var read = 0
        let limit: Int?

        mutating func advance() throws {
            if let row = try keys.next() {
                current = (row[0], row[1])
                read += 1
            } else {
                current = nil
            }
        }

        /// True when the list ended at its LIMIT, so more keys may follow.
        var isCut: Bool { current == nil && limit.map { read >= $0 } == true }
        /// This table's foreign keys to tracked tables: the column and the parent's list.
        var parents: [(column: Int, list: Int)] = []
        /// A row's first change after the scan's start, by key (nil: none after it).
        var firstChange: Statement?
        /// Keys sent ahead of their place, with a child: skipped when their place comes.
        var sentAhead = Set<DatabaseValue>()
        /// Keys whose first change is known to be at or before the place of a child that
        /// was sent: sent already, or before the scan's start.
        var sentBefore = Set<DatabaseValue>()
        /// This table's foreign keys to tables with local keys: values sent as identities.
        var identityLinks: [TrackedForeignKey] = []
    }

    private let origin: SiteID
    private let excluding: Set<SiteID>
    private let rowLimit: Int
    private let byteLimit: Int
    private let sites: [Int64: SiteID]
    private let latest: Int64
    private let acknowledgements: [SiteID: Int64]
    private var lists: [TableKeys] = []
    /// The `since` the scan started from, which orders every table's keys.
    private let scanStart: Int64
    private var since: Int64
    /// True once a batch has run through the last change.
    private(set) var isFinished = false
    /// Records read but left for the next batch, which they start: a row and the parent rows
    /// sent ahead with it (parents first).
    private var pending: (list: Int, seq: Int64, records: [(list: Int, record: ChangeSet.Record)])?
    /// Local ids to identities, when a table has local keys (see ``IdentityMap``).
    private var identities: IdentityMap.Outgoing?

    init(
        _ db: Database, origin: SiteID, since: Int64, excluding: Set<SiteID>, rowLimit: Int,
        byteLimit: Int, singleBatch: Bool
    ) throws {
        self.origin = origin
        self.since = since
        scanStart = since
        self.excluding = excluding
        self.rowLimit = rowLimit
        self.byteLimit = byteLimit
        sites = try Replica.siteNames(db)
        latest = try Int64.fetchOne(db, sql: "SELECT seq FROM \(EngineNames.replica) WHERE id = 1") ?? 0
        var acknowledgements: [SiteID: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT site, received FROM \(EngineNames.peers)") {
            acknowledgements[SiteID(row["site"])] = row["received"]
        }
        self.acknowledgements = acknowledgements

        // A batch never holds more than rowLimit rows, but rows of excluded sites are
        // skipped without counting, so a single batch reads a little further.
        let limit: Int? = singleBatch ? (excluding.isEmpty || rowLimit > Int.max / 4 ? rowLimit : rowLimit * 4) : nil
        let tables = try Replica.trackedTables(db)
        for table in tables {
            let clock = table.clockTable
            let key = table.primaryKey.quotedSQLIdentifier
            let values = table.columns.map { ", t.\($0.quotedSQLIdentifier)" }.joined()
            // A live row's first change after `since`: its earliest column change after it,
            // or its last change (a tombstone's, or a row tag's) when no column changed.
            let firstChange =
                table.columns.isEmpty
                ? "seq"
                : "CASE WHEN cl % 2 = 0 THEN seq ELSE min(seq"
                    + table.columns.indices.map { (index: Int) -> String in
                        let q = ClockTable.changedAt(index)
                        return ", coalesce(CASE WHEN \(q) > :since THEN \(q) END, seq)"
                    }.joined()
                    + ") END"
            let keys = try Row.fetchCursor(
                db,
                sql: "SELECT \(firstChange) AS first, pk FROM \(clock.quotedName) WHERE seq > :since ORDER BY first"
                    + (limit.map { " LIMIT \($0)" } ?? ""),
                arguments: ["since": since])
            let fetch = try db.makeStatement(
                sql: """
                    SELECT \(clock.selectList(alias: "c")), t.\(key) IS NOT NULL\(values)
                    FROM \(clock.quotedName) AS c LEFT JOIN \(table.name.quotedSQLIdentifier) AS t ON t.\(key) = c.pk
                    WHERE c.pk = ?
                    """)
            var list = TableKeys(table: table, keys: keys, fetch: fetch, current: nil, limit: limit)
            list.firstChange = try db.makeStatement(
                sql: "SELECT \(firstChange) FROM \(clock.quotedName) WHERE pk = :key AND seq > :since")
            try list.advance()
            lists.append(list)
        }
        let links = try TrackedForeignKey.read(db, tables: tables)
        for index in lists.indices {
            lists[index].parents = (links[lists[index].table.name] ?? []).compactMap { link in
                tables.firstIndex { $0.name == link.parent.name }.map { (link.column, $0) }
            }
            lists[index].identityLinks = (links[lists[index].table.name] ?? []).filter(\.parent.hasLocalKeys)
        }
        if tables.contains(where: \.hasLocalKeys) {
            identities = try IdentityMap.Outgoing(db, localSite: origin, sites: sites)
        }
    }

    /// The next change set: empty once every change has been handed out.
    mutating func nextBatch() throws -> ChangeSet {
        var records: [ChangeSet.Record] = []
        var usedTables: [Int: Int] = [:]
        var outTables: [ChangeSet.Table] = []
        var bytes = 0
        var through = since
        var complete = true
        while true {
            let next: (list: Int, seq: Int64, records: [(list: Int, record: ChangeSet.Record)])
            if let pending {
                next = pending
                self.pending = nil
            } else if lists.contains(where: \.isCut) {
                // A list cut by its LIMIT ran out: rows past it may sort before the others'.
                complete = false
                break
            } else {
                // The list whose next key has the lowest sequence number.
                var best: Int?
                for index in lists.indices {
                    guard let current = lists[index].current else { continue }
                    if best.map({ current.seq < lists[$0].current!.seq }) ?? true { best = index }
                }
                guard let best, let current = lists[best].current else { break }
                var sent: [(list: Int, record: ChangeSet.Record)] = []
                if lists[best].sentAhead.remove(current.key) == nil,
                    let record = try record(in: lists[best], key: current.key),
                    excluding.isEmpty || !Self.writers(of: record).allSatisfy(excluding.contains)
                {
                    let record = Self.withoutHeldColumns(record, excluding: excluding)
                    sent = try parentsAhead(of: record, in: best, at: current.seq) + [(best, record)]
                }
                next = (best, current.seq, sent)
                try lists[best].advance()
            }
            let size = next.records.reduce(0) { $0 + Replica.estimatedSize($1.record) }
            if !records.isEmpty && (records.count >= rowLimit || bytes + size > byteLimit) {
                pending = next
                complete = false
                break
            }
            for (list, var record) in next.records {
                let tableIndex: Int
                if let known = usedTables[list] {
                    tableIndex = known
                } else {
                    tableIndex = outTables.count
                    usedTables[list] = tableIndex
                    outTables.append(lists[list].table.changeSetTable)
                }
                record.table = tableIndex
                if let identities {
                    // Keys and foreign keys of tables with local keys travel as identities;
                    // the scan above works on local ids.
                    record = try identities.translate(
                        record, table: lists[list].table, links: lists[list].identityLinks)
                }
                records.append(record)
            }
            bytes += size
            through = next.seq
        }
        if complete {
            through = max(through, latest)
            isFinished = true
        }
        let start = since
        since = through
        return ChangeSet(
            origin: origin, since: start, through: through, acknowledgements: acknowledgements,
            tables: outTables, records: records)
    }

    /// The parent rows `record` (of list `list`, placed at sequence number `seq`) refers to
    /// whose first change comes after that place, parents first, each marked as sent ahead
    /// so it is not sent again at its own place; recursively for their own parents.
    private mutating func parentsAhead(of record: ChangeSet.Record, in list: Int, at seq: Int64) throws
        -> [(list: Int, record: ChangeSet.Record)]
    {
        guard record.isLive else { return [] }
        var result: [(list: Int, record: ChangeSet.Record)] = []
        for (column, parentList) in lists[list].parents {
            guard record.columns.indices.contains(column), let value = record.columns[column]?.value, value != .null
            else { continue }
            let key = value.databaseValue
            if lists[parentList].sentAhead.contains(key) || lists[parentList].sentBefore.contains(key) { continue }
            if parentList == list && key == record.key.databaseValue { continue }
            guard let statement = lists[parentList].firstChange,
                let first = try Int64.fetchOne(statement, arguments: ["key": key, "since": scanStart]),
                first > seq
            else {
                lists[parentList].sentBefore.insert(key)
                continue
            }
            guard let parent = try self.record(in: lists[parentList], key: key) else {
                lists[parentList].sentBefore.insert(key)
                continue
            }
            lists[parentList].sentAhead.insert(key)
            if !excluding.isEmpty && Self.writers(of: parent).allSatisfy(excluding.contains) { continue }
            let sentParent = Self.withoutHeldColumns(parent, excluding: excluding)
            result += try parentsAhead(of: sentParent, in: parentList, at: seq) + [(parentList, sentParent)]
        }
        return result
    }

    /// `record` without the columns last written by a site in `excluding`, when its row's
    /// incarnation came from one of them (its row site): the receiver holds every change of
    /// those sites this replica has, that incarnation and those writes included, so only the
    /// columns written by others travel — an edit made here after a download travels as an
    /// edit, not as the whole row. A row created (or re-created) here travels whole.
    static func withoutHeldColumns(_ record: ChangeSet.Record, excluding: Set<SiteID>) -> ChangeSet.Record {
        guard !excluding.isEmpty, record.isLive, excluding.contains(record.rowSite) else { return record }
        var sent = record
        for (index, column) in record.presentColumns where excluding.contains(column.site) {
            sent.columns[index] = nil
        }
        return sent
    }

    /// The sites whose writes `record` carries: its columns' writers, or, for a tombstone or
    /// a record with no column, the site of its row state. (A live row's creator is not one
    /// of them when its columns were written by others: the row state travels with them.)
    static func writers(of record: ChangeSet.Record) -> [SiteID] {
        let columns = record.presentColumns.map(\.column.site)
        return columns.isEmpty ? [record.rowSite] : columns
    }

    /// The record for one key: its clock row joined with its table row. Nil for a live clock
    /// row whose table row is missing (a delete that escaped capture; `reconcile()` records it).
    private func record(in list: TableKeys, key: DatabaseValue) throws -> ChangeSet.Record? {
        guard let row = try Row.fetchOne(list.fetch, arguments: [key]) else { return nil }
        let clockTable = list.table.clockTable
        let clock = clockTable.decode(row)
        // After the clock row: whether the table row exists, then its values.
        let present: Bool = row[clockTable.selectListCount]
        let valuesStart = clockTable.selectListCount + 1
        if clock.isLive && !present { return nil }
        var columns: [ChangeSet.Column?] = []
        if clock.isLive {
            columns.reserveCapacity(clock.columns.count)
            for (index, column) in clock.columns.enumerated() {
                // A column that last changed before `since` is on the receiver already
                // (NULL: a row from before the engine kept track, which travels whole).
                if let changedAt = column.changedAt, changedAt <= since {
                    columns.append(nil)
                    continue
                }
                columns.append(
                    ChangeSet.Column(
                        authorityCount: column.authority,
                        version: HybridLogicalClock(rawValue: column.version ?? 0),
                        site: try siteName(column.writer ?? 0),
                        value: SyncValue(row[valuesStart + index] as DatabaseValue)))
            }
        }
        return ChangeSet.Record(
            table: 0, key: SyncValue(clock.key), causalLength: clock.causalLength, authorityCount: clock.rowAuthority,
            rowVersion: HybridLogicalClock(rawValue: clock.rowVersion), rowSite: try siteName(clock.rowSite),
            columns: columns)
    }

    private func siteName(_ ordinal: Int64) throws -> SiteID {
        guard let site = sites[ordinal] else {
            throw VecSyncError.notAReplica(
                reason: "a clock table refers to unknown site ordinal \(ordinal) (\(EngineNames.sites) damaged)")
        }
        return site
    }
}

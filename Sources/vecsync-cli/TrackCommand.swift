import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli track`: starts replicating tables of a database.
struct TrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Start replicating tables: capture every write to them for sync.",
        discussion: """
            Creates a clock table and capture triggers for each table, and gives the rows \
            already in it a version. Writes from any SQLite client are captured from then on, \
            the sqlite3 shell included. The database keeps its site id: the first track gives \
            it --site, or a random one.

            A table needs a single primary key: TEXT or BLOB holding UUIDs, the same on every \
            device, or INTEGER, whose ids are then local to each replica (a row from another \
            device gets an id of this one's; references to it are translated); the command \
            says why when a table cannot be tracked. A key that is NULL or of another type (a blob in a TEXT key) is refused \
            when the row is written.

            --authority makes one site's writes win over concurrent writes from every \
            other site in the tables named with --table (as a desktop indexer owns the file \
            catalogue it scans); every replica must name the same authority, or their change \
            sets are refused. A table with an integer key tracked with --authority keeps ids the \
            same everywhere: that site alone inserts its rows, and the other replicas refuse \
            inserts.

            --counter COLUMN makes a column of the one --table merge as a counter: the steps \
            each device adds up, instead of the last writer's value winning (declare it on \
            every replica, when the table is first tracked; rows already there count as this \
            replica's contributions).

            --fts NAME registers the FTS5 table NAME as a derived index of the one table named \
            with --table: never synced, kept current after every merge. Its columns must be \
            columns of that table. An external-content table (content='files', \
            content_rowid='id') is kept by triggers on the table: the application's own when it \
            has them, else three the command creates; a self-contained one is keyed by its \
            column named like the table's key, or by its rowid.

            Examples:
              vecsync-cli track --db phone.db --table photos --table notes --site phone
              vecsync-cli track --db mac.db --table files --fts files_fts --site mac --authority mac
              vecsync-cli track --db phone.db --table threads --counter k0 --counter alpha --counter m
              vecsync-cli track --db mac.db --table files --site mac --authority mac
              vecsync-cli track --db phone.db --table files --site phone --authority mac
              vecsync-cli track --db ipad.db --table photos --read-only
            """)

    @Option(name: .long, help: "The database file.")
    var db: String

    @Option(name: .long, help: "A table to track (repeat for several).")
    var table: [String] = []

    @Option(name: .long, help: "This replica's site id, for a database that has none yet.")
    var site: String?

    @Option(name: .long, help: "The site whose writes win in the tables named with --table.")
    var authority: String?

    @Option(name: .long, help: "An FTS5 table to keep as a derived index of the --table (repeat for several).")
    var fts: [String] = []

    @Option(name: .long, help: "A column of the --table that merges as a counter, not last-writer-wins (repeat for several).")
    var counter: [String] = []

    @Flag(
        name: .long,
        help: "Make the replica read-only: it pulls, never pushes, and refuses local writes to tracked tables.")
    var readOnly = false

    @Flag(name: .long, help: "Make the replica writable again.")
    var writable = false

    func validate() throws {
        if authority != nil && table.isEmpty { throw ValidationError("--authority needs the --table it applies to") }
        if table.isEmpty && !readOnly && !writable {
            throw ValidationError("name at least one --table, or --read-only / --writable")
        }
        if !fts.isEmpty && table.count != 1 { throw ValidationError("--fts needs exactly one --table, its source") }
        if !counter.isEmpty && table.count != 1 { throw ValidationError("--counter needs exactly one --table, its own") }
        if readOnly && writable { throw ValidationError("--read-only and --writable exclude each other") }
        if let site, site.isEmpty { throw ValidationError("--site cannot be empty") }
        if let authority, authority.isEmpty { throw ValidationError("--authority cannot be empty") }
    }

    func run() throws {
        let database = try CLIDatabase.open(db)
        let stored = try Replica.storedSite(in: database.writer)
        if let site, let stored, stored.rawValue != site {
            throw ValidationError("\(db) is already replica '\(stored)'; a database keeps its site id")
        }
        let replica = try Replica(database.writer, site: stored ?? site.map { SiteID($0) } ?? .random())
        if !counter.isEmpty {
            // Declared before the table is tracked, so its rows' values become this site's
            // contributions; on a table that already syncs, every replica would count the
            // value it holds as its own.
            if try replica.trackedTables().contains(where: { $0.name.lowercased() == table[0].lowercased() }) {
                throw ValidationError("\(table[0]) is tracked already: declare its counters when it is first tracked")
            }
            try database.writer.write { db in
                let columns = Set(try db.columns(in: table[0]).map { $0.name.lowercased() })
                if let missing = counter.first(where: { !columns.contains($0.lowercased()) }) {
                    throw ValidationError("\(table[0]) has no column \(missing)")
                }
                try CounterColumns.declare(db, table: table[0], columns: counter)
            }
        }
        for name in table {
            let tracked = try replica.track(name, authority: authority.map { SiteID($0) })
            print(
                "tracking \(tracked.name) (key \(tracked.primaryKey), \(tracked.columns.count) columns) as site '\(replica.site)'"
            )
            if let authority {
                if tracked.authority != SiteID(authority) {
                    try replica.setAuthority(SiteID(authority), for: tracked.name)
                }
                print("site '\(authority)' is authoritative for \(tracked.name)")
            }
        }
        for name in fts {
            let index = try database.writer.read { db in try DerivedIndex.fts5(reading: name, on: table[0], in: db) }
            try replica.register(index)
            print("\(name) (FTS5 over \(index.columns.joined(separator: ", ")) of \(index.table), key \(index.keyColumn)) is a derived index")
        }
        if readOnly || writable {
            try replica.setReadOnly(readOnly)
            print("replica '\(replica.site)' is now \(readOnly ? "read-only" : "writable")")
        }
    }
}

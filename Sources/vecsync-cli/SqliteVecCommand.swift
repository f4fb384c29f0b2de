import ArgumentParser
import VecSync

/// `vecsync-cli sqlite-vec migrate|export`: a vec0 table moved between sqlite-vec's format
/// and this extension's, in place, in one transaction.
struct SqliteVecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlite-vec",
        abstract: "Move a vec0 table between sqlite-vec's format and VecSync's.",
        discussion: """
            VecSync reads a table sqlite-vec wrote as it is, without changing the file, and \
            refuses to write it until it is migrated. `migrate` converts it in place (every \
            row kept); `export` writes it back in sqlite-vec 0.1.9's format, every row \
            written since included, so code that uses sqlite-vec reads it again. Each runs \
            in one transaction: a failure leaves the file as it was.

            Examples:
              vecsync-cli sqlite-vec migrate --db app.db --table vec_items
              vecsync-cli sqlite-vec export --db app.db --table vec_items
            """,
        subcommands: [Migrate.self, Export.self])

    /// The options both subcommands take.
    struct Target: ParsableArguments {
        @Option(help: "The database file.")
        var db: String

        @Option(help: "The vec0 table.")
        var table: String

        /// Runs `function(table)` on the file and prints its answer ("t: N rows ...").
        func run(_ function: String) throws {
            let database = try CLIDatabase.open(db)
            let answer = try database.write { db in
                try String.fetchOne(db, sql: "SELECT \(function)(?)", arguments: [table])
            }
            print(answer ?? "")
        }
    }

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a table sqlite-vec wrote to VecSync's format, in place.")

        @OptionGroup var target: Target

        func run() throws { try target.run("vecsync_migrate_sqlite_vec") }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a table back in sqlite-vec 0.1.9's format, in place.")

        @OptionGroup var target: Target

        func run() throws { try target.run("vecsync_export_sqlite_vec") }
    }
}

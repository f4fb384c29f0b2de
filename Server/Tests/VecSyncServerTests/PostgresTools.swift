import Foundation
import VecSyncServer

/// PostgreSQL's own client programs (`createdb`, `pg_dump`, `pg_restore`), run against the
/// test database's server, for scenarios an operator plays out with them: a backup, and a
/// restore into a new database.
enum PostgresTools {
    /// The folder of the newest PostgreSQL's programs (Debian's layout), or the one on PATH.
    static func program(_ name: String) throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/\(name)") {
            return "\(root)/\(version)/bin/\(name)"
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        throw ServerConfigurationError("PostgreSQL's \(name) is not installed")
    }

    /// `url` with another database.
    static func url(_ url: String, database: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw ServerConfigurationError("bad URL \(url)") }
        components.path = "/" + database
        guard let result = components.string else { throw ServerConfigurationError("bad URL \(url)") }
        return result
    }

    /// Runs PostgreSQL's program `name` to its end and returns what it printed; throws with
    /// its output when it fails.
    @discardableResult
    static func run(_ name: String, _ arguments: [String]) throws -> String {
        try ProgramRun.run(URL(fileURLWithPath: try program(name)), arguments)
    }
}

import Foundation
import Testing

/// A file of SQL cases in `Tests/SQLCases/`, parsed (the format: that folder's README.md).
///
/// Every file there runs on its own (`SQLCaseFilesTests`): its cases each alone
/// (``everyStandaloneCase``), or, in a file with a file setup, in order on one database file
/// (``everySessionFile``, ``SQLPath/verify(casesIn:)``).
///
/// ```swift
/// @Test(arguments: SQLPath.allCases, SQLCaseFile.everyStandaloneCase)
/// func behaves(path: SQLPath, sqlCase: SQLCase) { sqlCase.verify(path) }
/// ```
///
/// A file that cannot be read or parsed never stops the run: it is one case that fails
/// naming the file and line, and ``SQLPath/verify(casesIn:)`` records the issue.
struct SQLCaseFile: Sendable {
    /// The file's name in `Tests/SQLCases/`.
    var name: String
    /// Its setups in order, each with the cases that follow it.
    var groups: [SQLCaseGroup]

    /// `Tests/SQLCases/` of this package, found from this source file's path.
    static var folder: URL {
        Shell.packageRoot.appendingPathComponent("Tests/SQLCases", isDirectory: true)
    }

    /// Reads and parses `Tests/SQLCases/<name>`.
    init(named name: String) throws(SQLCaseFileError) {
        let url = Self.folder.appendingPathComponent(name)
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SQLCaseFileError(file: name, line: 0, problem: "cannot read \(url.path): \(error)")
        }
        try self.init(name: name, text: text)
    }

    /// Parses `text` as the file `name`.
    init(name: String, text: String) throws(SQLCaseFileError) {
        self.name = name
        var parser = SQLCaseFileParser(file: name)
        groups = try parser.parse(text)
    }

    /// Every `.cases` file of `Tests/SQLCases/`, parsed, in name order; a folder that cannot
    /// be listed is one failure.
    static let everyFile: [Result<SQLCaseFile, SQLCaseFileError>] = {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".cases") }.sorted()
        } catch {
            return [.failure(SQLCaseFileError(file: "", line: 0, problem: "cannot list \(folder.path): \(error)"))]
        }
        return names.map { name in
            do throws(SQLCaseFileError) {
                return .success(try SQLCaseFile(named: name))
            } catch {
                return .failure(error)
            }
        }
    }()

    /// Whether the file has a file setup: its cases then run in order on one database file.
    var isSession: Bool { groups.contains(where: \.onFile) }

    /// Every case that runs alone (its setup before its SQL) of every file without a file
    /// setup, in name order then file order; a file that cannot be read or parsed is one case
    /// that fails naming the file and line.
    static var everyStandaloneCase: [SQLCase] {
        everyFile.flatMap { parsed -> [SQLCase] in
            switch parsed {
            case .success(let file): file.isSession ? [] : file.groups.flatMap(\.standaloneCases)
            case .failure(let error): [SQLCase.unreadable(error)]
            }
        }
    }

    /// The names of the files with a file setup, for ``SQLPath/verify(casesIn:)``.
    static var everySessionFile: [String] {
        everyFile.compactMap { parsed in
            guard case .success(let file) = parsed, file.isSession else { return nil }
            return file.name
        }
    }
}

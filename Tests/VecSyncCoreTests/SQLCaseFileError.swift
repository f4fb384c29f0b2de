/// Why a case file in `Tests/SQLCases/` cannot be run: the file, the line, the problem.
struct SQLCaseFileError: Error, Sendable, CustomStringConvertible {
    /// The file's name in `Tests/SQLCases/`.
    var file: String
    /// The line (from 1; 0 when the whole file is at fault).
    var line: Int
    /// What is wrong, in words.
    var problem: String

    /// `Tests/SQLCases/<file>:<line>`, as an editor opens it.
    var place: String { "Tests/SQLCases/\(file)" + (line > 0 ? ":\(line)" : "") }

    var description: String { "\(place): \(problem)" }
}

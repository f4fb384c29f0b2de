import Foundation

/// A program run to its end by the tests (`vecsync-cli`, PostgreSQL's tools, `mount`), with
/// what it printed; ``run(_:_:environment:)`` throws it when the program fails.
struct ProgramRun: Error, CustomStringConvertible {
    var program: String
    var arguments: [String]
    var status: Int32
    /// Its standard output and standard error, interleaved.
    var output: String

    var description: String { "\(program) \(arguments.joined(separator: " ")) exited \(status): \(output)" }

    /// Runs `program` with `arguments` (and `environment` when given, else the tests') to
    /// its end; returns what it printed, or throws the run when it exits other than 0.
    @discardableResult
    static func run(_ program: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ProgramRun(
                program: program.path, arguments: arguments, status: process.terminationStatus, output: printed)
        }
        return printed
    }
}

import ArgumentParser
import Foundation

/// A `vecsync-server serve` child process on a free loopback port.
final class ServerProcess: Sendable {
    let process: Process
    let url: URL

    private init(process: Process, url: URL) {
        self.process = process
        self.url = url
    }

    /// Starts the server and waits (at most 60 s) for its "listening on" line.
    static func start(binary: String, postgres: String?, data: String, rate: Double) throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var arguments = ["serve", "--port", "0", "--rate", String(rate)]
        if let postgres { arguments += ["--postgres", postgres] } else { arguments += ["--data", data] }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let handle = output.fileHandleForReading
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !text.contains("listening on http://") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression),
            let url = URL(string: String(text[range]))
        else {
            process.terminate()
            throw ValidationError("vecsync-server did not start: \(text)")
        }
        return ServerProcess(process: process, url: url)
    }

    /// Its resident set size now, from /proc (0 where there is none).
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }

    /// SIGTERM, then waits for it to exit.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

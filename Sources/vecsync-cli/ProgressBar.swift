import Foundation

/// A one-line progress bar on standard error: `[#########.........]  45%  45000/100000 rows  12000 rows/s`.
///
/// It redraws at most ten times a second, and only when enabled (by default when standard
/// error is a terminal), so logs and pipes get no control characters.
struct ProgressBar {
    let total: Int
    let unit: String
    let enabled: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(total: Int, unit: String, enabled: Bool) {
        self.total = Swift.max(total, 1)
        self.unit = unit
        self.enabled = enabled
    }

    /// True when standard error is a terminal.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Shows `done` of ``total``.
    mutating func update(_ done: Int) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 || done >= total else { return }
        lastDraw = now
        drawn = true
        let fraction = Swift.min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let elapsed = now.timeIntervalSince(start)
        let rate = elapsed > 0 ? Int(Double(done) / elapsed) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let percent = String(Int(fraction * 100))
        let line =
            "\r[\(bar)] " + String(repeating: " ", count: 3 - percent.count) + percent
            + "%  \(done)/\(total) \(unit)  \(rate) \(unit)/s "
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Ends the line the bar was drawn on.
    func finish() {
        guard enabled, drawn else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

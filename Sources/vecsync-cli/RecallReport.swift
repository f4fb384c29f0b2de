import Foundation

/// What `vecsync-cli recall` measured: recall@k and time per query at each nprobe, beside
/// the exact scan's time.
struct RecallReport: Encodable, CustomStringConvertible {
    /// One nprobe setting's figures.
    struct Setting: Encodable {
        var nprobe: Int
        /// The share of the exact k nearest rows the index found.
        var recall: Double
        var millisecondsPerQuery: Double

        enum CodingKeys: String, CodingKey {
            case nprobe, recall
            case millisecondsPerQuery = "ms_per_query"
        }
    }

    var table: String
    var rows: Int
    var lists: Int
    var queries: Int
    var k: Int
    var exactMillisecondsPerQuery: Double
    var settings: [Setting]

    enum CodingKeys: String, CodingKey {
        case table, rows, lists, queries, k, settings
        case exactMillisecondsPerQuery = "exact_ms_per_query"
    }

    /// A header line, then a table: nprobe, recall@k, ms per query, and its share of the
    /// exact scan's time.
    var description: String {
        var lines = [
            "\(table): ivf index of \(lists) lists over \(rows) rows; \(queries) stored rows as queries, k = \(k)",
            "nprobe  recall@\(k)  ms/query  time vs exact",
        ]
        func line(_ probe: String, _ recall: Double, _ milliseconds: Double) -> String {
            let ratio = exactMillisecondsPerQuery > 0 ? milliseconds / exactMillisecondsPerQuery : 0
            return pad(probe, 6) + "  " + pad(String(format: "%.3f", recall), 7 + String(k).count) + "  "
                + pad(String(format: "%.3f", milliseconds), 8) + "  " + pad(String(format: "%.2fx", ratio), 13)
        }
        for setting in settings {
            lines.append(line(String(setting.nprobe), setting.recall, setting.millisecondsPerQuery))
        }
        lines.append(line("exact", 1, exactMillisecondsPerQuery))
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}

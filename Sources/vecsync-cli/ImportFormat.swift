import ArgumentParser
import Foundation

/// The vector file formats `import` reads.
enum ImportFormat: String, CaseIterable, ExpressibleByArgument {
    case npy
    case jsonl
    case csv

    /// The format named by a file's extension.
    static func guess(_ path: String) -> ImportFormat? {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "npy": .npy
        case "jsonl", "ndjson", "json": .jsonl
        case "csv", "tsv", "txt": .csv
        default: nil
        }
    }
}

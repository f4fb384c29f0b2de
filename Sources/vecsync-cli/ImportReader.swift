import Foundation
import VecSync

/// Reads a vector file into records, one at a time, knowing the total up front (for the
/// progress bar).
struct ImportReader {
    let total: Int
    private let next: (Int) throws -> ImportRecord?

    init(path: String, format: ImportFormat, firstKey: Int64) throws {
        let url = URL(fileURLWithPath: path)
        let data = try Data(contentsOf: url, options: .alwaysMapped)
        switch format {
        case .npy:
            let array = try NpyArray(data: data)
            total = array.rows
            next = { index in
                index < array.rows
                    ? ImportRecord(key: (firstKey + Int64(index)).databaseValue, vector: array.row(index), fields: [])
                    : nil
            }
        case .jsonl:
            let lines = Self.lines(data)
            total = lines.count
            next = { index in
                guard index < lines.count else { return nil }
                return try Self.jsonRecord(lines[index], line: index + 1, fallbackKey: firstKey + Int64(index))
            }
        case .csv:
            var lines = Self.lines(data)
            if let first = lines.first, Self.isHeader(first) { lines.removeFirst() }
            let rows = lines
            total = rows.count
            next = { index in
                guard index < rows.count else { return nil }
                return try Self.csvRecord(rows[index], line: index + 1)
            }
        }
    }

    /// The record at `index` (0-based), or nil past the end.
    func record(_ index: Int) throws -> ImportRecord? {
        try next(index)
    }

    // MARK: - Formats

    static func lines(_ data: Data) -> [Substring] {
        String(decoding: data, as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// `{"id": "a", "embedding": [1, 2], "title": "…"}`: `embedding` (or `vector`) is the
    /// vector, `id` the key (the line number when absent), scalar fields become columns.
    static func jsonRecord(_ line: Substring, line number: Int, fallbackKey: Int64) throws -> ImportRecord {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else {
            throw ValidationErrorText("line \(number): not a JSON object")
        }
        let vectorField = object["embedding"] ?? object["vector"]
        let vector: Vector
        if let floats = vectorField?.floats {
            vector = Vector(floats)
        } else if case .string(let text)? = vectorField {
            vector = try Vector(text: text)
        } else {
            throw ValidationErrorText("line \(number): no \"embedding\" array of numbers")
        }
        let key = object["id"]?.databaseValue ?? fallbackKey.databaseValue
        let fields = object.keys.sorted()
            .filter { !["id", "embedding", "vector"].contains($0) }
            .compactMap { name in object[name]?.databaseValue.map { (name, $0) } }
        return ImportRecord(key: key, vector: vector, fields: fields)
    }

    /// `key,x1,x2,…,xn` or `key,"[x1, …, xn]"`.
    static func csvRecord(_ line: Substring, line number: Int) throws -> ImportRecord {
        let fields = csvFields(line)
        guard fields.count >= 2 else { throw ValidationErrorText("line \(number): expected key,x1,x2,…") }
        let keyText = fields[0].trimmingCharacters(in: .whitespaces)
        let key = Int64(keyText).map(\.databaseValue) ?? keyText.databaseValue
        if fields.count == 2, fields[1].contains("[") {
            return ImportRecord(key: key, vector: try Vector(text: fields[1]), fields: [])
        }
        var scalars: [Float] = []
        for (i, field) in fields.dropFirst().enumerated() {
            guard let value = Float(field.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationErrorText("line \(number): element \(i) is not a number: '\(field)'")
            }
            scalars.append(value)
        }
        return ImportRecord(key: key, vector: Vector(scalars), fields: [])
    }

    static func isHeader(_ line: Substring) -> Bool {
        let fields = csvFields(line)
        guard fields.count >= 2 else { return false }
        let second = fields[1].trimmingCharacters(in: .whitespaces)
        return Float(second) == nil && !second.hasPrefix("[")
    }

    /// Comma-separated fields (tabs too), double quotes around fields that hold separators.
    static func csvFields(_ line: Substring) -> [String] {
        var fields: [String] = []
        var current = ""
        var quoted = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            if character == "\"" {
                quoted.toggle()
            } else if (character == "," || character == "\t") && !quoted {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}

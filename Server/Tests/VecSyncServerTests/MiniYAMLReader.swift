import Foundation

/// Reads the lines of a block YAML document into a ``MiniYAML`` node (see there for what it
/// understands).
struct MiniYAMLReader {
    /// A line of content: its number (1-based), how far it is indented, and the rest.
    typealias Line = (number: Int, indent: Int, content: String)

    /// The lines still to read, blank and comment lines left out.
    var lines: [Line]
    var position = 0

    init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            let trimmed = line.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
            return (number: index + 1, indent: line.count - trimmed.count, content: String(trimmed))
        }
    }

    func peek() -> Line? { position < lines.count ? lines[position] : nil }

    mutating func node(at indent: Int) throws -> MiniYAML {
        guard let line = peek() else { return .map([]) }
        return line.content == "-" || line.content.hasPrefix("- ") ? try list(at: indent) : try map(at: indent)
    }

    mutating func list(at indent: Int) throws -> MiniYAML {
        var values: [MiniYAML] = []
        while let line = peek(), line.indent == indent, line.content == "-" || line.content.hasPrefix("- ") {
            let rest = String(line.content.dropFirst(1).drop { $0 == " " })
            if rest.isEmpty {
                position += 1
                values.append(try value(after: line, text: ""))
            } else if Self.splitKey(rest) != nil {
                // A map item: its first key stands right after the dash.
                let inner = indent + line.content.count - rest.count
                lines[position] = (number: line.number, indent: inner, content: rest)
                values.append(try map(at: inner))
            } else {
                position += 1
                values.append(try value(after: line, text: rest))
            }
        }
        return .list(values)
    }

    mutating func map(at indent: Int) throws -> MiniYAML {
        var entries: [(key: String, value: MiniYAML)] = []
        while let line = peek(), line.indent == indent, !(line.content == "-" || line.content.hasPrefix("- ")) {
            guard let (key, rest) = Self.splitKey(line.content) else {
                throw MiniYAMLError(line: line.number, reason: "expected 'key: value', found '\(line.content)'")
            }
            if entries.contains(where: { $0.key == key }) {
                throw MiniYAMLError(line: line.number, reason: "key '\(key)' appears twice")
            }
            position += 1
            entries.append((key: key, value: try value(after: line, text: rest)))
        }
        if let line = peek(), line.indent > indent {
            throw MiniYAMLError(line: line.number, reason: "unexpected indentation")
        }
        return .map(entries)
    }

    /// The value written after a key or a dash on `line`: `text`, or the lines below.
    mutating func value(after line: Line, text: String) throws -> MiniYAML {
        switch text {
        case "":
            guard let next = peek(),
                next.indent > line.indent
                    || (next.indent == line.indent && next.content.hasPrefix("- ") && !line.content.hasPrefix("-"))
            else { return .scalar("") }
            return try node(at: next.indent)
        case "|", "|-", ">", ">-":
            var body: [String] = []
            while let next = peek(), next.indent > line.indent {
                body.append(next.content)
                position += 1
            }
            return .scalar(body.joined(separator: text.hasPrefix("|") ? "\n" : " "))
        default:
            if text.hasPrefix("[") {
                guard text.hasSuffix("]") else {
                    throw MiniYAMLError(line: line.number, reason: "a flow sequence must end on its line")
                }
                let inner = text.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if inner.isEmpty { return .list([]) }
                return .list(inner.split(separator: ",").map { .scalar(Self.unquote(String($0))) })
            }
            if text.hasPrefix("{") {
                throw MiniYAMLError(line: line.number, reason: "flow mappings are not read")
            }
            if text.hasPrefix("\"") || text.hasPrefix("'") { return .scalar(Self.unquote(text)) }
            var words = [text]
            while let next = peek(), next.indent > line.indent {
                if Self.splitKey(next.content) != nil {
                    throw MiniYAMLError(line: next.number, reason: "a key below a value: '\(next.content)'")
                }
                words.append(next.content)
                position += 1
            }
            return .scalar(words.joined(separator: " "))
        }
    }

    /// `key: value` or `key:` split at the first colon followed by a space or the end
    /// (outside quotes); nil when the text is not a key.
    static func splitKey(_ text: String) -> (String, String)? {
        var quote: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'", index == text.startIndex {
                quote = character
            } else if character == ":" {
                let after = text.index(after: index)
                if after == text.endIndex || text[after] == " " {
                    let key = unquote(String(text[..<index]))
                    let rest = text[after...].trimmingCharacters(in: .whitespaces)
                    return key.isEmpty ? nil : (key, rest)
                }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// A scalar without its quotes (`"a\"b"` → `a"b`; `'it''s'` → `it's`).
    static func unquote(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 2, let first = trimmed.first, first == trimmed.last, first == "\"" || first == "'"
        else { return trimmed }
        let inner = String(trimmed.dropFirst().dropLast())
        return first == "'"
            ? inner.replacingOccurrences(of: "''", with: "'")
            : inner.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
    }
}

/// A failure to read the document, with the line (1-based).
struct MiniYAMLError: Error, CustomStringConvertible {
    var line: Int
    var reason: String
    var description: String { "line \(line): \(reason)" }
}

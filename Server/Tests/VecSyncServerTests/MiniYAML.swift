import Foundation

/// The block YAML `docs/openapi.yaml` is written in, read into maps, lists and scalars: block
/// mappings and sequences by indentation, quoted and plain scalars (a plain one may go on
/// over more-indented lines), flow sequences of scalars (`[a, b]`), block scalars (`|`, `>`),
/// comment lines. Anything else is an error naming the line, so the checks that read the
/// document never pass over what they did not understand.
indirect enum MiniYAML {
    case scalar(String)
    case list([MiniYAML])
    /// Keys and their values, in the document's order.
    case map([(key: String, value: MiniYAML)])

    /// The value of `key` in a map; nil for another key or node.
    subscript(key: String) -> MiniYAML? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// A map's keys in order; empty for another node.
    var keys: [String] {
        guard case .map(let entries) = self else { return [] }
        return entries.map(\.key)
    }

    /// A scalar's text.
    var text: String? {
        guard case .scalar(let value) = self else { return nil }
        return value
    }

    /// A list's items (a flow sequence's too).
    var items: [MiniYAML]? {
        guard case .list(let values) = self else { return nil }
        return values
    }

    /// Reads a whole document.
    static func read(_ text: String) throws -> MiniYAML {
        var reader = MiniYAMLReader(text)
        guard let first = reader.peek() else { return .map([]) }
        let node = try reader.node(at: first.indent)
        if let left = reader.peek() {
            throw MiniYAMLError(line: left.number, reason: "unexpected indentation")
        }
        return node
    }
}

import Foundation
import VecSyncServer

/// Compares the API's JSON bodies (``WireBody``) with the schemas of `docs/openapi.yaml`:
/// the keys a body encodes and the properties its schema lists, each value's JSON type, the
/// items of arrays and maps and nested objects through their `$ref`, enumerated strings, and
/// which properties are required. Each problem is one line naming the place.
struct SchemaCheck {
    /// The document, read.
    let document: MiniYAML

    /// The schema `components/schemas/<name>`.
    func schema(named name: String) -> MiniYAML? {
        document["components"]?["schemas"]?[name]
    }

    /// Every schema's name.
    var schemaNames: [String] {
        document["components"]?["schemas"]?.keys ?? []
    }

    /// What is wrong with `Body`: its example against its schema, then its required
    /// properties (the non-optional ones, and ``WireBody/optionalForOlderServers``) against
    /// the schema's `required`.
    func problems<Body: WireBody>(of body: Body.Type) throws -> [String] {
        let name = Body.schemaName
        guard let schema = schema(named: name) else {
            return ["\(name): no schema of that name under components/schemas"]
        }
        let json = try SchemaCheck.encoded(Body.example)
        var found = problems(json, schema, at: name)
        var properties: [String] = []
        var optional: Set<String> = []
        for child in Mirror(reflecting: Body.example).children {
            guard let label = child.label else { continue }
            properties.append(label)
            if Mirror(reflecting: child.value).displayStyle == .optional { optional.insert(label) }
        }
        if let fields = json as? [String: Any] {
            for label in properties where fields[label] == nil {
                found.append("\(name).\(label): the example leaves it unset, so its schema goes unchecked")
            }
        }
        for label in Body.optionalForOlderServers.sorted() where !optional.contains(label) {
            found.append("\(name).\(label): named optional for older servers, but not optional")
        }
        let required = Set(properties).subtracting(optional).union(Body.optionalForOlderServers)
        let documented = Set(schema["required"]?.items?.compactMap(\.text) ?? [])
        for label in required.subtracting(documented).sorted() {
            found.append("\(name).\(label): required by the Swift type, optional in the schema")
        }
        for label in documented.subtracting(required).sorted() {
            found.append("\(name).\(label): required by the schema, optional in the Swift type")
        }
        return found
    }

    /// A value as JSONSerialization reads its JSON encoding.
    static func encoded(_ value: some Encodable) throws -> Any {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(value), options: .fragmentsAllowed)
    }

    /// The JSON type of a value JSONSerialization read, as a schema's `type` names it: a
    /// number is told apart by decoding it again, strictly, as a Bool or an Int64.
    static func jsonType(_ value: Any) -> String {
        if value is String { return "string" }
        if value is [Any] { return "array" }
        if value is [String: Any] { return "object" }
        if value is NSNull { return "null" }
        func decodes<T: Decodable>(as type: T.Type) -> Bool {
            guard let data = try? JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed) else {
                return false
            }
            return (try? JSONDecoder().decode(T.self, from: data)) != nil
        }
        if decodes(as: Bool.self) { return "boolean" }
        return decodes(as: Int64.self) ? "integer" : "number"
    }

    /// What is wrong with `value` (as JSONSerialization reads it) against `schema`, at `path`.
    func problems(_ value: Any, _ schema: MiniYAML, at path: String) -> [String] {
        var schema = schema
        if let reference = schema["$ref"]?.text {
            let prefix = "#/components/schemas/"
            guard reference.hasPrefix(prefix),
                let target = self.schema(named: String(reference.dropFirst(prefix.count)))
            else { return ["\(path): $ref \(reference) names no schema"] }
            schema = target
        }
        guard let type = schema["type"]?.text else { return ["\(path): the schema has no type"] }
        let actual = Self.jsonType(value)
        guard actual == type || (type == "number" && actual == "integer") else {
            return ["\(path): encoded as \(actual), documented as \(type)"]
        }
        if let fields = value as? [String: Any] { return problems(fields: fields, schema, at: path) }
        if let items = value as? [Any] {
            guard let itemSchema = schema["items"] else { return ["\(path): an array schema without items"] }
            if items.isEmpty { return ["\(path): the example's array is empty, so its items go unchecked"] }
            return items.enumerated().flatMap { problems($1, itemSchema, at: "\(path)[\($0)]") }
        }
        if let text = value as? String, let allowed = schema["enum"]?.items?.compactMap(\.text), !allowed.contains(text)
        {
            return ["\(path): '\(text)' is not one of \(allowed)"]
        }
        return []
    }

    /// What is wrong with an object's fields: keys on one side only, then each field.
    private func problems(fields: [String: Any], _ schema: MiniYAML, at path: String) -> [String] {
        let sorted = fields.sorted { $0.key < $1.key }
        if let additional = schema["additionalProperties"], schema["properties"] == nil {
            if fields.isEmpty { return ["\(path): the example's map is empty, so its values go unchecked"] }
            return sorted.flatMap { problems($1, additional, at: "\(path)[\($0)]") }
        }
        guard let properties = schema["properties"] else { return ["\(path): an object schema without properties"] }
        var found: [String] = []
        for (key, _) in sorted where properties[key] == nil {
            found.append("\(path).\(key): encoded, but not documented")
        }
        for key in properties.keys where fields[key] == nil {
            found.append("\(path).\(key): documented, but not encoded")
        }
        for (key, field) in sorted {
            if let property = properties[key] { found += problems(field, property, at: "\(path).\(key)") }
        }
        return found
    }
}

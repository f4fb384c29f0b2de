import VecSync

/// A JSON value as `import` reads JSON lines: integers stay integers, so keys and fields
/// bind with their SQL types.
enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value bound to SQL; arrays and objects have none.
    var databaseValue: DatabaseValue? {
        switch self {
        case .null: .null
        case .bool(let value): value.databaseValue
        case .integer(let value): value.databaseValue
        case .number(let value): value.databaseValue
        case .string(let value): value.databaseValue
        case .array, .object: nil
        }
    }

    /// The elements of an array of numbers, as floats.
    var floats: [Float]? {
        guard case .array(let elements) = self else { return nil }
        var floats: [Float] = []
        for element in elements {
            switch element {
            case .integer(let value): floats.append(Float(value))
            case .number(let value): floats.append(Float(value))
            default: return nil
            }
        }
        return floats
    }
}

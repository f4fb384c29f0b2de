import Foundation

/// A value's JSON form: `null`, or an object naming its storage class (see ``ChangeSet``'s
/// JSON form).
extension SyncValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case integer, real, text, base64, bytes, identity, site
    }

    /// Encodes the value: `null`, `{"integer": n}`, `{"real": x}`, `{"text": s}`,
    /// `{"base64": s, "bytes": n}` or `{"identity": n, "site": s}`.
    public func encode(to encoder: any Encoder) throws {
        if case .null = self {
            var single = encoder.singleValueContainer()
            try single.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .null: break
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .real(let value):
            if value.isNaN {
                try container.encode("nan", forKey: .real)
            } else if value.isInfinite {
                try container.encode(value < 0 ? "-inf" : "inf", forKey: .real)
            } else {
                try container.encode(value, forKey: .real)
            }
        case .text(let value): try container.encode(value, forKey: .text)
        case .blob(let value):
            try container.encode(value.base64EncodedString(), forKey: .base64)
            try container.encode(value.count, forKey: .bytes)
        case .identity(let site, let id):
            try container.encode(id, forKey: .identity)
            try container.encode(site.rawValue, forKey: .site)
        }
    }

    /// Decodes a value from its JSON form.
    public init(from decoder: any Decoder) throws {
        if try decoder.singleValueContainer().decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.integer) {
            if let number = try? container.decode(Int64.self, forKey: .integer) {
                self = .integer(number)
            } else {
                let text = try container.decode(String.self, forKey: .integer)
                guard let number = Int64(text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .integer, in: container, debugDescription: "'\(text)' is not a 64-bit integer")
                }
                self = .integer(number)
            }
        } else if container.contains(.real) {
            if let text = try? container.decode(String.self, forKey: .real) {
                switch text {
                case "nan": self = .real(.nan)
                case "inf": self = .real(.infinity)
                case "-inf": self = .real(-.infinity)
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: .real, in: container, debugDescription: "'\(text)' is not a real")
                }
            } else {
                self = .real(try container.decode(Double.self, forKey: .real))
            }
        } else if container.contains(.identity) {
            let id: Int64
            if let number = try? container.decode(Int64.self, forKey: .identity) {
                id = number
            } else {
                let text = try container.decode(String.self, forKey: .identity)
                guard let number = Int64(text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .identity, in: container, debugDescription: "'\(text)' is not a 64-bit integer")
                }
                id = number
            }
            self = .identity(site: SiteID(try container.decode(String.self, forKey: .site)), id: id)
        } else if container.contains(.text) {
            self = .text(try container.decode(String.self, forKey: .text))
        } else if container.contains(.base64) {
            let text = try container.decode(String.self, forKey: .base64)
            guard let bytes = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .base64, in: container, debugDescription: "blob is not base64")
            }
            if let count = try container.decodeIfPresent(Int.self, forKey: .bytes), count != bytes.count {
                throw DecodingError.dataCorruptedError(
                    forKey: .bytes, in: container, debugDescription: "blob has \(bytes.count) bytes, not \(count)")
            }
            self = .blob(bytes)
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "a value is null or an object with integer, real, text or base64"))
        }
    }
}

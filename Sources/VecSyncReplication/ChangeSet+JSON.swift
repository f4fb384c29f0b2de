import Foundation

extension ChangeSet {
    /// A JSON rendering of the change set, for people debugging a sync: every record with
    /// its table, key, causal length, versions, sites and values (blobs in base64 with their
    /// byte count). It is not a transport format; ``serialized()`` is.
    ///
    /// ```swift
    /// print(try replica.changes(since: 0).jsonString())
    /// ```
    public func jsonString(prettyPrinted: Bool = true) -> String {
        let object: [String: Any] = [
            "formatVersion": Int(Self.formatVersion),
            "origin": origin.rawValue,
            "since": since,
            "through": through,
            "schemaFingerprint": FNV1a.hex(schemaFingerprint),
            "acknowledgements": Dictionary(uniqueKeysWithValues: acknowledgements.map { ($0.key.rawValue, $0.value) }),
            "tables": tables.map { table -> [String: Any] in
                [
                    "name": table.name, "primaryKey": table.primaryKey, "columns": table.columns,
                    "fingerprint": FNV1a.hex(table.fingerprint),
                ]
            },
            "records": records.map { record -> [String: Any] in
                let table = tables.indices.contains(record.table) ? tables[record.table] : nil
                var json: [String: Any] = [
                    "table": table?.name ?? "#\(record.table)",
                    "key": Self.json(record.key),
                    "causalLength": record.causalLength,
                    "authorityCount": record.authorityCount,
                    "deleted": !record.isLive,
                    "version": "\(record.rowVersion)",
                    "site": record.rowSite.rawValue,
                ]
                if record.isLive {
                    var columns: [String: Any] = [:]
                    for (index, column) in record.presentColumns {
                        let name =
                            table.flatMap { $0.columns.indices.contains(index) ? $0.columns[index] : nil }
                            ?? "#\(index)"
                        columns[name] = [
                            "value": Self.json(column.value), "version": "\(column.version)",
                            "site": column.site.rawValue, "authorityCount": column.authorityCount,
                        ]
                    }
                    json["columns"] = columns
                }
                return json
            },
        ]
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if prettyPrinted { options.insert(.prettyPrinted) }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: options) else {
            return "{\"error\": \"change set could not be rendered as JSON\"}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// One value as JSON: numbers and text as themselves, blobs as base64 with their size.
    private static func json(_ value: SyncValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .integer(let integer): return integer
        case .real(let real): return real.isFinite ? real as Any : "\(real)"
        case .text(let text): return text
        case .blob(let blob): return ["bytes": blob.count, "base64": blob.base64EncodedString()]
        }
    }
}

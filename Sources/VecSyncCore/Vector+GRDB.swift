import Foundation
import GRDB

/// A vector binds as an F32 blob and is fetched from an F32 blob or from libSQL text:
///
/// ```swift
/// try db.execute(sql: "INSERT INTO photos(source_id, embedding) VALUES (?, ?)",
///                arguments: ["PH-1", Vector([0.1, 0.2])])
/// let v = try Vector.fetchOne(db, sql: "SELECT embedding FROM photos WHERE source_id = ?",
///                             arguments: ["PH-1"])
/// ```
extension Vector: DatabaseValueConvertible {
    /// The F32 blob.
    public var databaseValue: DatabaseValue { blob.databaseValue }

    /// A vector from an F32 blob or libSQL text; nil for NULL, numbers and malformed values.
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Vector? {
        switch dbValue.storage {
        case .blob(let data):
            return try? Vector(blob: data)
        case .string(let text):
            return try? Vector(text: text)
        default:
            return nil
        }
    }
}

import Foundation
import VecSync

/// Reads the query vector of `query`: libSQL text, or a file holding text, a JSON array,
/// an `.npy` array (its first row), or raw little-endian float32 bytes (`.f32`, `.bin`).
enum QueryVector {
    static func parse(text: String) throws -> Vector {
        try Vector(text: text)
    }

    static func read(file path: String) throws -> Vector {
        let url = URL(fileURLWithPath: path)
        let data = try Data(contentsOf: url)
        switch url.pathExtension.lowercased() {
        case "npy":
            let array = try NpyArray(data: data)
            guard array.rows > 0 else { throw ValidationErrorText("\(path): the array is empty") }
            return array.row(0)
        case "f32", "bin":
            return try Vector(blob: data)
        default:
            return try Vector(text: String(decoding: data, as: UTF8.self))
        }
    }
}

import Foundation
import VecSync

/// A NumPy `.npy` array of float32 or float64, one or two dimensions, C order: what
/// `numpy.save` writes. Rows are vectors.
struct NpyArray {
    let rows: Int
    let columns: Int
    private let data: Data
    private let offset: Int
    private let elementSize: Int

    init(data: Data) throws {
        let bytes = [UInt8](data.prefix(12))
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1...5]) == Array("NUMPY".utf8) else {
            throw ValidationErrorText("not an .npy file (no \\x93NUMPY magic)")
        }
        let major = bytes[6]
        let headerLength: Int
        let headerStart: Int
        if major == 1 {
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        } else {
            guard bytes.count >= 12 else { throw ValidationErrorText("truncated .npy header") }
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
            headerStart = 12
        }
        guard data.count >= headerStart + headerLength else { throw ValidationErrorText("truncated .npy header") }
        let header = String(decoding: data.subdata(in: headerStart..<headerStart + headerLength), as: UTF8.self)
        guard let descr = Self.value(of: "descr", in: header) else {
            throw ValidationErrorText(".npy header has no descr: \(header)")
        }
        switch descr.trimmingCharacters(in: CharacterSet(charactersIn: "'\" ")) {
        case "<f4", "|f4", "f4": elementSize = 4
        case "<f8", "f8": elementSize = 8
        default:
            throw ValidationErrorText(
                ".npy element type \(descr) is not supported: use little-endian float32 or float64")
        }
        if Self.value(of: "fortran_order", in: header)?.contains("True") == true {
            throw ValidationErrorText(".npy array is in Fortran order: save it with numpy.ascontiguousarray")
        }
        let shapeKey = header.range(of: "shape")?.upperBound ?? header.startIndex
        guard
            let shapeText = header[shapeKey...].range(of: "(").flatMap({ open in
                header[open.upperBound...].range(of: ")").map { String(header[open.upperBound..<$0.lowerBound]) }
            })
        else { throw ValidationErrorText(".npy header has no shape: \(header)") }
        let shape = shapeText.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        switch shape.count {
        case 1: (rows, columns) = (1, shape[0])
        case 2: (rows, columns) = (shape[0], shape[1])
        default: throw ValidationErrorText(".npy array has shape (\(shapeText)): expected (rows, dimensions)")
        }
        offset = headerStart + headerLength
        guard data.count >= offset + rows * columns * elementSize else {
            throw ValidationErrorText(".npy data is truncated: \(rows)×\(columns) elements announced")
        }
        self.data = data
    }

    /// Row `index` as a float32 vector.
    func row(_ index: Int) -> Vector {
        let start = offset + index * columns * elementSize
        var scalars = [Float](repeating: 0, count: columns)
        data.withUnsafeBytes { raw in
            for j in 0..<columns {
                if elementSize == 4 {
                    let bits = raw.loadUnaligned(fromByteOffset: start + j * 4, as: UInt32.self)
                    scalars[j] = Float(bitPattern: UInt32(littleEndian: bits))
                } else {
                    let bits = raw.loadUnaligned(fromByteOffset: start + j * 8, as: UInt64.self)
                    scalars[j] = Float(Double(bitPattern: UInt64(littleEndian: bits)))
                }
            }
        }
        return Vector(scalars)
    }

    private static func value(of key: String, in header: String) -> String? {
        guard let keyRange = header.range(of: "'\(key)'") ?? header.range(of: "\"\(key)\""),
            let colon = header[keyRange.upperBound...].firstIndex(of: ":")
        else { return nil }
        let rest = header[header.index(after: colon)...]
        let end = rest.firstIndex(of: ",") ?? rest.endIndex
        return String(rest[..<end]).trimmingCharacters(in: .whitespaces)
    }
}

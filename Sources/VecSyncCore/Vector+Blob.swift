import Foundation

extension Vector {
    /// The vector as an F32 blob: 4 bytes an element, little-endian IEEE 754 float32, the
    /// layout of libSQL's `F32_BLOB(n)` and sqlite-vec's `float[n]`.
    public var blob: Data {
        var data = Data(count: scalars.count * 4)
        data.withUnsafeMutableBytes { raw in
            for (i, value) in scalars.enumerated() {
                raw.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self)
            }
        }
        return data
    }

    /// Decodes an F32 blob.
    ///
    /// Throws ``VecSyncError/invalidBlob(byteCount:reason:)`` when the length is not a
    /// multiple of 4, and ``VecSyncError/dimensionMismatch(expected:got:)`` when
    /// `dimensions` is given and the blob holds another number of elements.
    public init(blob: Data, dimensions: Int? = nil) throws {
        guard blob.count % 4 == 0 else {
            throw VecSyncError.invalidBlob(
                byteCount: blob.count, reason: "an F32 blob holds 4 bytes an element")
        }
        let count = blob.count / 4
        if let dimensions, dimensions != count {
            throw VecSyncError.dimensionMismatch(expected: dimensions, got: count)
        }
        var scalars = [Float](repeating: 0, count: count)
        blob.withUnsafeBytes { raw in
            for i in 0..<count {
                let bits = raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)
                scalars[i] = Float(bitPattern: UInt32(littleEndian: bits))
            }
        }
        self.scalars = scalars
    }
}

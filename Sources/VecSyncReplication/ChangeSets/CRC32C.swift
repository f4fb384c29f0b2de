/// CRC-32C (Castagnoli), the checksum at the end of every change set.
///
/// Table-driven, eight bytes per step ("slicing by 8"). It detects truncation and bit rot,
/// not tampering by someone who recomputes it.
enum CRC32C {
    /// The eight lookup tables of the slicing-by-8 algorithm.
    private static let tables: [[UInt32]] = {
        let polynomial: UInt32 = 0x82F6_3B78
        var tables = Array(repeating: Array(repeating: UInt32(0), count: 256), count: 8)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1
            }
            tables[0][index] = crc
        }
        for index in 0..<256 {
            var crc = tables[0][index]
            for slice in 1..<8 {
                crc = tables[0][Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice][index] = crc
            }
        }
        return tables
    }()

    /// The checksum of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let tables = Self.tables
        var crc: UInt32 = 0xFFFF_FFFF
        var index = 0
        let count = bytes.count
        let t0 = tables[0]
        let t1 = tables[1]
        let t2 = tables[2]
        let t3 = tables[3]
        let t4 = tables[4]
        let t5 = tables[5]
        let t6 = tables[6]
        let t7 = tables[7]
        while index + 8 <= count {
            let low =
                crc
                ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
            crc =
                t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)]
                ^ t5[Int((low >> 16) & 0xFF)] ^ t4[Int(low >> 24)]
                ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])]
                ^ t1[Int(bytes[index + 6])] ^ t0[Int(bytes[index + 7])]
            index += 8
        }
        while index < count {
            crc = t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
            index += 1
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}

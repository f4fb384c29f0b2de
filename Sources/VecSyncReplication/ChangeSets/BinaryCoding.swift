import Foundation

/// Appends little-endian integers, LEB128 varints and length-prefixed bytes.
struct ByteWriter {
    /// The bytes written so far.
    var bytes: [UInt8] = []

    /// Reserves room for `count` more bytes.
    mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func uint64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// An unsigned LEB128 varint.
    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// A non-negative count or index.
    mutating func count(_ value: Int) {
        varint(UInt64(max(0, value)))
    }

    /// A signed value, zigzag-encoded.
    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Length-prefixed bytes.
    mutating func data<C: Collection>(_ data: C) where C.Element == UInt8 {
        count(data.count)
        bytes.append(contentsOf: data)
    }

    /// Length-prefixed UTF-8.
    mutating func string(_ string: String) {
        data(Array(string.utf8))
    }
}

/// Reads what ``ByteWriter`` writes, throwing ``VecSyncError/corruptChangeSet(reason:offset:)``
/// on anything out of bounds or malformed.
struct ByteReader {
    let bytes: [UInt8]
    /// The position of the next byte to read.
    var offset: Int
    /// One past the last readable byte.
    let end: Int

    init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
    }

    var remaining: Int { end - offset }

    func corrupt(_ reason: String) -> VecSyncError {
        VecSyncError.corruptChangeSet(reason: reason, offset: offset)
    }

    mutating func byte() throws -> UInt8 {
        guard offset < end else { throw corrupt("unexpected end of data") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() throws -> UInt16 {
        let low = UInt16(try byte())
        return low | UInt16(try byte()) << 8
    }

    mutating func uint32() throws -> UInt32 {
        var value: UInt32 = 0
        for shift in stride(from: 0, to: 32, by: 8) { value |= UInt32(try byte()) << UInt32(shift) }
        return value
    }

    mutating func uint64() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(try byte()) << UInt64(shift) }
        return value
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 64 else { throw corrupt("varint longer than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// A count, checked against what the remaining bytes could hold at `minimumSize` each.
    mutating func count(minimumSize: Int = 1, what: String) throws -> Int {
        let value = try varint()
        guard value <= UInt64(remaining / max(1, minimumSize)) else {
            throw corrupt("\(what) count \(value) exceeds the remaining \(remaining) bytes")
        }
        return Int(value)
    }

    /// An index below `limit`.
    mutating func index(below limit: Int, what: String) throws -> Int {
        let value = try varint()
        guard value < UInt64(limit) else { throw corrupt("\(what) index \(value) out of range (\(limit))") }
        return Int(value)
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A non-negative 63-bit value.
    mutating func nonNegative(_ what: String) throws -> Int64 {
        let value = try varint()
        guard value <= UInt64(Int64.max) else { throw corrupt("\(what) \(value) is out of range") }
        return Int64(value)
    }

    mutating func data() throws -> ArraySlice<UInt8> {
        let length = try count(what: "byte")
        defer { offset += length }
        return bytes[offset..<(offset + length)]
    }

    mutating func string(_ what: String) throws -> String {
        let slice = try data()
        guard let string = String(bytes: slice, encoding: .utf8) else { throw corrupt("\(what) is not valid UTF-8") }
        return string
    }
}

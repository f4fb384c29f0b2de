import Foundation

extension Vector {
    /// The vector as libSQL text, `[0.5,-1.0,3e-05]`: what `vector32('…')` parses and
    /// `vector_extract` prints. Each element is written with the shortest decimal that reads
    /// back as the same float, so text round-trips exactly.
    public var text: String {
        "[" + scalars.map { "\($0)" }.joined(separator: ",") + "]"
    }

    /// Parses libSQL text such as `[1, 2.5, -3e-2]`, with the grammar `vector32('…')` reads.
    ///
    /// The text is `[` numbers separated by `,` `]`, with blanks (space, tab, newline,
    /// carriage return, form feed, vertical tab) anywhere between tokens; `[]` is the empty
    /// vector. A number is decimal: an optional sign, digits with an optional fraction (`1.`,
    /// `.5`), an optional exponent (`e-3`). Hex floats, `inf`, `nan`, a trailing comma and
    /// more than ``maximumTextDimensions`` elements are refused, as the SQL functions refuse
    /// them. Each number is read as a double and rounded to float, as the SQL functions do.
    ///
    /// Throws ``VecSyncError/invalidVectorText(_:reason:)`` for anything else (the error
    /// carries the text and the byte offset of the problem), and
    /// ``VecSyncError/nonFiniteElement(index:value:)`` for a number beyond float32's range.
    ///
    /// ```swift
    /// try Vector(text: " [1, .5,-3e-2] ")  // [1.0, 0.5, -0.03]
    /// try Vector(text: "[0x1p3]")          // throws: expected a number at offset 1
    /// ```
    public init(text: String) throws {
        let bytes = Array(text.utf8)
        func refuse(_ reason: String) -> VecSyncError {
            VecSyncError.invalidVectorText(VecSyncError.excerpt(text), reason: reason)
        }
        var i = Self.skipBlanks(bytes, from: 0)
        guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else {
            throw refuse("it must start with '['")
        }
        i = Self.skipBlanks(bytes, from: i + 1)
        var scalars: [Float] = []
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
        } else {
            while true {
                i = Self.skipBlanks(bytes, from: i)
                let length = Self.numberLength(bytes, from: i)
                guard length > 0, length < Self.maximumNumberLength,
                    let value = Double(String(decoding: bytes[i..<(i + length)], as: UTF8.self))
                else {
                    throw refuse("expected a number at offset \(i)")
                }
                let scalar = Float(value)
                guard scalar.isFinite else {
                    throw VecSyncError.nonFiniteElement(index: scalars.count, value: scalar)
                }
                guard scalars.count < Self.maximumTextDimensions else {
                    throw refuse("more than \(Self.maximumTextDimensions) dimensions")
                }
                scalars.append(scalar)
                i = Self.skipBlanks(bytes, from: i + length)
                if i < bytes.count, bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    break
                }
                throw refuse("expected ',' or ']' at offset \(i)")
            }
        }
        i = Self.skipBlanks(bytes, from: i)
        guard i == bytes.count else {
            throw refuse("unexpected text after ']' at offset \(i)")
        }
        self.scalars = scalars
    }

    /// The most elements vector text may hold, as in the SQL functions.
    public static let maximumTextDimensions = 65_536

    /// Number tokens this long or longer are refused, as in the SQL functions.
    static let maximumNumberLength = 400

    /// The index of the first byte at or after `start` that is not a blank.
    private static func skipBlanks(_ bytes: [UInt8], from start: Int) -> Int {
        var i = start
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x0B].contains(bytes[i]) { i += 1 }
        return i
    }

    /// The length of the decimal number at `start`, 0 if there is none:
    /// `[+-] digits [. digits] [(e|E) [+-] digits]`, with at least one digit before the exponent.
    private static func numberLength(_ bytes: [UInt8], from start: Int) -> Int {
        func isDigit(_ i: Int) -> Bool { i < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) }
        func isOne(of characters: String, _ i: Int) -> Bool { i < bytes.count && characters.utf8.contains(bytes[i]) }
        var i = start
        var digits = 0
        if isOne(of: "+-", i) { i += 1 }
        while isDigit(i) {
            i += 1
            digits += 1
        }
        if isOne(of: ".", i) {
            i += 1
            while isDigit(i) {
                i += 1
                digits += 1
            }
        }
        guard digits > 0 else { return 0 }
        if isOne(of: "eE", i) {
            var j = i + 1
            var exponentDigits = 0
            if isOne(of: "+-", j) { j += 1 }
            while isDigit(j) {
                j += 1
                exponentDigits += 1
            }
            guard exponentDigits > 0 else { return 0 }
            i = j
        }
        return i - start
    }
}

extension Vector: CustomStringConvertible {
    /// The libSQL text form, shortened in the middle past 8 elements.
    public var description: String {
        guard scalars.count > 8 else { return text }
        let head = scalars.prefix(4).map { "\($0)" }.joined(separator: ",")
        let tail = scalars.suffix(2).map { "\($0)" }.joined(separator: ",")
        return "[\(head),… \(scalars.count - 6) more …,\(tail)]"
    }
}

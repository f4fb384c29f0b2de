import Foundation
import Testing

@testable import VecSyncCore

@Suite("Vector as a value: blob, text, Codable")
struct VectorValueTests {
    @Test func blobIsLittleEndianFloat32AndRoundTripsBitExact() throws {
        let values: [Float] = [1, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -3.25e-7, 0.1]
        let v = Vector(values)
        let blob = v.blob
        #expect(blob.count == values.count * 4)
        #expect(Array(blob.prefix(4)) == [0x00, 0x00, 0x80, 0x3F])  // 1.0f little-endian
        let back = try Vector(blob: blob, dimensions: values.count)
        #expect(back.scalars.map(\.bitPattern) == values.map(\.bitPattern))
    }

    @Test func blobWhoseLengthIsNotAMultipleOfFourIsRefused() {
        #expect(throws: VecSyncError.invalidBlob(byteCount: 7, reason: "an F32 blob holds 4 bytes an element")) {
            try Vector(blob: Data(count: 7))
        }
    }

    @Test func blobOfTheWrongDimensionReportsExpectedAndGot() {
        #expect(throws: VecSyncError.dimensionMismatch(expected: 768, got: 3)) {
            try Vector(blob: Vector([1, 2, 3]).blob, dimensions: 768)
        }
        #expect(
            "\(VecSyncError.dimensionMismatch(expected: 768, got: 3))" == "wrong vector dimension: expected 768, got 3")
    }

    @Test func textRoundTripsEveryFloatExactly() throws {
        var rng = ExtensionRandom(defaultSeed: 0x5EED_0001)
        for _ in 0..<200 {
            let v = Vector(
                (0..<16).map { _ in Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)) }
                    .map { $0.isFinite ? $0 : 1 })
            let back = try Vector(text: v.text)
            #expect(back.scalars.map(\.bitPattern) == v.scalars.map(\.bitPattern), "seed \(rng.seed): \(v.text)")
        }
    }

    @Test func textParsesLibSQLForms() throws {
        #expect(try Vector(text: "[1, 2.5, -3e-2]") == Vector([1, 2.5, -0.03]))
        #expect(try Vector(text: "  [ ] ") == Vector([]))
        #expect(Vector([1, 2.5]).text == "[1.0,2.5]")
    }

    @Test func malformedTextIsRefusedWithTheTextAndTheReason() {
        #expect(throws: VecSyncError.invalidVectorText("[1, x]", reason: "expected a number at offset 4")) {
            try Vector(text: "[1, x]")
        }
        #expect(throws: VecSyncError.invalidVectorText("1, 2", reason: "it must start with '['")) {
            try Vector(text: "1, 2")
        }
        #expect(throws: VecSyncError.invalidVectorText("[1 2]", reason: "expected ',' or ']' at offset 3")) {
            try Vector(text: "[1 2]")
        }
        #expect(throws: VecSyncError.invalidVectorText("[1] x", reason: "unexpected text after ']' at offset 4")) {
            try Vector(text: "[1] x")
        }
        #expect(throws: VecSyncError.nonFiniteElement(index: 1, value: .infinity)) {
            try Vector(text: "[1, 1e39]")
        }
    }

    /// Text the SQL parser reads, and text it refuses, for `Vector(text:)` to agree with:
    /// blanks, signs, bare fractions and exponents, hex floats, words, stray commas.
    static let grammarCases: [String] = [
        "[1,2]", " [ 1 , 2 ] ", "\t[\n1\r,\u{0C}2\u{0B}]\n", "[]", "[ ]", "[1.]", "[.5]", "[+.5]", "[-0]",
        "[1e3]", "[1E+3]", "[1e-3]", "[00012]", "[1e0001]", "[ -1.25e-2 ,\t3 ]", "[1e-50]", "[3.4028235e38]",
        "[0x1p3]", "[0x10]", "[inf]", "[-inf]", "[nan]", "[infinity]", "[1e400]", "[1e39]", "[-1e39]",
        "[1,]", "[,1]", "[1,,2]", "[1 2]", "[1", "1]", "[1]x", "[1] ", "[[1]]", "[\"1\"]", "", " ",
        "[e3]", "[1e]", "[1e+]", "[.]", "[-]", "[+]", "[1.5.2]", "[1_000]", "[0b1]", "[1\u{A0}]",
        "[\u{A0}1]", "[\u{0661}]", "[\u{FF11}]",
        "[0." + String(repeating: "0", count: 396) + "1]",  // a 399-byte number: read
        "[0." + String(repeating: "0", count: 397) + "1]",  // a 400-byte number: refused
        "[" + Array(repeating: "0", count: 65_536).joined(separator: ",") + "]",
        "[" + Array(repeating: "0", count: 65_537).joined(separator: ",") + "]",
    ]

    /// The vector `vector32(text)` makes in SQL as float32 bit patterns, or nil when it
    /// refuses the text.
    static func sqlScalars(_ db: Database, _ text: String) -> [UInt32]? {
        guard let blob = try? Data.fetchOne(db, sql: "SELECT vector32(?)", arguments: [text]),
            let vector = try? Vector(blob: blob)
        else { return nil }
        return vector.scalars.map(\.bitPattern)
    }

    @Test func textIsReadAsTheSQLFunctionsReadIt() throws {
        let db = try HostFixtures.database()
        try db.read { db in
            for text in Self.grammarCases {
                let swift = (try? Vector(text: text))?.scalars.map(\.bitPattern)
                #expect(
                    swift == Self.sqlScalars(db, text),
                    "Vector(text:) and vector32(?) differ on \(text.prefix(60).debugDescription)")
            }
            // And what both read, vector_extract prints.
            let extracted = try String.fetchOne(
                db, sql: "SELECT vector_extract(vector32(?))", arguments: ["[ .5 ,1e1]"])
            #expect(extracted == "[0.5,10]")
            #expect(try Vector(text: "[ .5 ,1e1]") == Vector([0.5, 10]))
        }
    }

    @Test func randomDecimalsRoundAsTheSQLFunctionsRoundThem() throws {
        var random = ExtensionRandom(defaultSeed: 0x5EED_0002)
        let db = try HostFixtures.database()
        try db.read { db in
            for _ in 0..<500 {
                let digits = (0..<Int.random(in: 1...24, using: &random)).map { _ in
                    String(Int.random(in: 0...9, using: &random))
                }
                let point = Int.random(in: 0...digits.count, using: &random)
                let sign = ["", "-", "+"][Int.random(in: 0...2, using: &random)]
                let exponent = Bool.random(using: &random) ? "e\(Int.random(in: -50...40, using: &random))" : ""
                let number = sign + digits[..<point].joined() + "." + digits[point...].joined() + exponent
                let text = "[\(number)]"
                let swift = (try? Vector(text: text))?.scalars.map(\.bitPattern)
                #expect(swift == Self.sqlScalars(db, text), "seed \(random.seed): \(text)")
            }
        }
    }

    @Test func validateRejectsWrongDimensionAndNaN() {
        #expect(throws: VecSyncError.dimensionMismatch(expected: 4, got: 3)) {
            try Vector([1, 2, 3]).validate(dimensions: 4)
        }
        #expect(throws: VecSyncError.self) { try Vector([1, .nan]).validate(dimensions: 2) }
        #expect(throws: Never.self) { try Vector([1, 2]).validate(dimensions: 2) }
    }

    @Test func codableEncodesTheBytesNotDecimals() throws {
        let v = Vector([0.1, 0.2, 0.3])
        let json = String(decoding: try JSONEncoder().encode(["v": v]), as: UTF8.self)
        #expect(json == "{\"v\":\"\(v.blob.base64EncodedString())\"}")
        let back = try JSONDecoder().decode([String: Vector].self, from: Data(json.utf8))
        #expect(back["v"]?.scalars.map(\.bitPattern) == v.scalars.map(\.bitPattern))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Vector.self, from: Data("\"AAA=\"".utf8))  // 2 bytes
        }
    }

    @Test func swiftDistancesMatchTheirDefinitions() {
        let a: Vector = [1, 0]
        let b: Vector = [0, 2]
        #expect(a.cosineDistance(to: b) == 1)
        #expect(a.cosineDistance(to: a) == 0)
        #expect(Vector([3, 4]).l2Distance(to: [0, 0]) == 5)
        #expect(Vector([3, 4]).normalized() == Vector([0.6, 0.8]))
    }
}

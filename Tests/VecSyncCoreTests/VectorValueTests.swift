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
        #expect("\(VecSyncError.dimensionMismatch(expected: 768, got: 3))" == "wrong vector dimension: expected 768, got 3")
    }

    @Test func textRoundTripsEveryFloatExactly() throws {
        var rng = ExtensionRandom(defaultSeed: 0x5EED_0001)
        for _ in 0..<200 {
            let v = Vector((0..<16).map { _ in Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)) }
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
        #expect(throws: VecSyncError.invalidVectorText("[1, x]", reason: "element 1 is not a number: 'x'")) {
            try Vector(text: "[1, x]")
        }
        #expect(throws: VecSyncError.invalidVectorText("1, 2", reason: "expected a list such as [1, 2.5, -3e-2]")) {
            try Vector(text: "1, 2")
        }
        #expect(throws: VecSyncError.nonFiniteElement(index: 1, value: .infinity)) {
            try Vector(text: "[1, inf]")
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

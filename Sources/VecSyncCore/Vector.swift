import Foundation

/// A vector of 32-bit floats: the value stored in an `F32_BLOB(n)` column and searched by
/// `vec0` tables and `vector_top_k`.
///
/// ```swift
/// let v = Vector([0.1, 0.2, 0.3])
/// v.blob           // 12 bytes of little-endian float32
/// v.text           // "[0.1,0.2,0.3]", what vector32('…') parses
/// try Vector(blob: v.blob, dimensions: 3) == v  // true
/// ```
///
/// A `Vector` binds to SQL as an F32 blob and is fetched from blobs or libSQL text, so it
/// goes straight into GRDB's statement arguments and rows (see `Vector+GRDB.swift`).
public struct Vector: Sendable, Hashable {
    /// The elements, in order.
    public var scalars: [Float]

    /// Creates a vector from its elements.
    public init(_ scalars: [Float]) {
        self.scalars = scalars
    }

    /// Creates a vector from a sequence of elements.
    public init<S: Sequence>(_ elements: S) where S.Element == Float {
        self.scalars = Array(elements)
    }

    /// Creates a vector of `dimensions` elements, each equal to `value`.
    public init(repeating value: Float, dimensions: Int) {
        self.scalars = Array(repeating: value, count: Swift.max(0, dimensions))
    }

    /// The number of elements.
    public var dimensions: Int { scalars.count }

    /// Throws ``VecSyncError/dimensionMismatch(expected:got:)`` unless the vector has
    /// `expected` elements, and ``VecSyncError/nonFiniteElement(index:value:)`` when an
    /// element is NaN or infinite.
    ///
    /// Stores call it before writing, so a bad embedding is refused with the numbers that
    /// explain why instead of an opaque SQL error.
    public func validate(dimensions expected: Int) throws {
        guard scalars.count == expected else {
            throw VecSyncError.dimensionMismatch(expected: expected, got: scalars.count)
        }
        if let index = scalars.firstIndex(where: { !$0.isFinite }) {
            throw VecSyncError.nonFiniteElement(index: index, value: scalars[index])
        }
    }
}

extension Vector: ExpressibleByArrayLiteral {
    /// Creates a vector from a literal: `let v: Vector = [1, 0, 0]`.
    public init(arrayLiteral elements: Float...) {
        self.scalars = elements
    }
}

extension Vector: RandomAccessCollection {
    /// The position of the first element (always 0).
    public var startIndex: Int { scalars.startIndex }
    /// The position one past the last element.
    public var endIndex: Int { scalars.endIndex }
    /// The element at `position`.
    public subscript(position: Int) -> Float { scalars[position] }
}

import Foundation

extension Vector {
    /// The vector as libSQL text, `[0.5,-1.0,3e-05]`: what `vector32('…')` parses and
    /// `vector_extract` prints. Each element is written with the shortest decimal that reads
    /// back as the same float, so text round-trips exactly.
    public var text: String {
        "[" + scalars.map { "\($0)" }.joined(separator: ",") + "]"
    }

    /// Parses libSQL text such as `[1, 2.5, -3e-2]`.
    ///
    /// Throws ``VecSyncError/invalidVectorText(_:reason:)`` for anything else (the error
    /// carries the text), and ``VecSyncError/nonFiniteElement(index:value:)`` for NaN or
    /// infinite elements, which no vector column accepts.
    public init(text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("["), trimmed.hasSuffix("]"), trimmed.count >= 2 else {
            throw VecSyncError.invalidVectorText(
                VecSyncError.excerpt(text), reason: "expected a list such as [1, 2.5, -3e-2]")
        }
        let body = trimmed.dropFirst().dropLast()
        if body.allSatisfy({ $0.isWhitespace }) {
            self.scalars = []
            return
        }
        var scalars: [Float] = []
        for (index, part) in body.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let token = part.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Float(token) else {
                throw VecSyncError.invalidVectorText(
                    VecSyncError.excerpt(text), reason: "element \(index) is not a number: '\(token)'")
            }
            guard value.isFinite else {
                throw VecSyncError.nonFiniteElement(index: index, value: value)
            }
            scalars.append(value)
        }
        self.scalars = scalars
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

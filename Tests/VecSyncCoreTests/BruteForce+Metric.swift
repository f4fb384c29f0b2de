import Testing

extension BruteForce {
    /// A distance as the issue defines it: cosine = 1 − cos, l2 = Euclidean, dot = −inner
    /// product, l1 = sum of absolute differences.
    enum Metric: String, Sendable, CaseIterable, CustomTestStringConvertible {
        case cosine, l2, dot, l1

        var testDescription: String { rawValue }

        /// The distance between `a` and `b`, in Double.
        func distance(_ a: [Float], _ b: [Float]) -> Double {
            let sums = BruteForce.doubleSums(a, b)
            switch self {
            case .cosine: return 1 - sums.dot / (sums.aa.squareRoot() * sums.bb.squareRoot())
            case .l2: return sums.l2.squareRoot()
            case .dot: return -sums.dot
            case .l1: return sums.l1
            }
        }
    }
}

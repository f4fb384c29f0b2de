/// The FQAHO model parameters of a thread: K₀, α (fractional, memory effects) and m.
public struct ParameterSet: Sendable, Hashable, Codable {
    /// K₀, kept within 0.1 ... 10.
    public var k0: Double
    /// α, kept within 0.1 ... 2.
    public var alpha: Double
    /// m, kept within 0.5 ... 5.
    public var m: Double

    /// Creates a parameter set.
    public init(k0: Double, alpha: Double, m: Double) {
        self.k0 = k0
        self.alpha = alpha
        self.m = m
    }

    /// The range each parameter is clamped to.
    public static let k0Range: ClosedRange<Double> = 0.1...10
    /// The range of α.
    public static let alphaRange: ClosedRange<Double> = 0.1...2
    /// The range of m.
    public static let mRange: ClosedRange<Double> = 0.5...5

    /// The parameters after a message of the thread is judged: approval moves K₀ +0.05,
    /// α +0.02, m −0.01; refusal K₀ −0.08, α −0.03, m +0.02; each clamped to its range.
    /// Other statuses leave them unchanged.
    public func adjusted(for status: ApprovalStatus) -> ParameterSet {
        switch status {
        case .approved:
            ParameterSet(
                k0: Self.clamp(k0 + 0.05, Self.k0Range),
                alpha: Self.clamp(alpha + 0.02, Self.alphaRange),
                m: Self.clamp(m - 0.01, Self.mRange))
        case .refused:
            ParameterSet(
                k0: Self.clamp(k0 - 0.08, Self.k0Range),
                alpha: Self.clamp(alpha - 0.03, Self.alphaRange),
                m: Self.clamp(m + 0.02, Self.mRange))
        default:
            self
        }
    }

    private static func clamp(_ value: Double, _ range: ClosedRange<Double>) -> Double {
        Swift.min(range.upperBound, Swift.max(range.lowerBound, value))
    }
}

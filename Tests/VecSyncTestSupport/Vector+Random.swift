import VecSyncCore

extension Vector {
    /// A vector of `dimensions` elements uniform in -1 ... 1, drawn from `random`.
    public static func random(dimensions: Int, using random: inout SeededRandom) -> Vector {
        Vector((0..<dimensions).map { _ in Float.random(in: -1...1, using: &random) })
    }
}

extension Vector {
    /// The dot product with `other`; both must have the same number of elements.
    public func dot(_ other: Vector) -> Float {
        precondition(scalars.count == other.scalars.count, "dot product of vectors of different dimensions")
        var sum: Float = 0
        for i in scalars.indices { sum += scalars[i] * other.scalars[i] }
        return sum
    }

    /// The Euclidean length.
    public var norm: Float { dot(self).squareRoot() }

    /// The vector scaled to length 1 (the zero vector is returned unchanged).
    public func normalized() -> Vector {
        let length = norm
        guard length > 0 else { return self }
        return Vector(scalars.map { $0 / length })
    }

    /// The cosine distance `1 - cos(θ)`, as `vector_distance_cos` computes it (0 for the
    /// same direction, 2 for opposite ones).
    public func cosineDistance(to other: Vector) -> Float {
        let denominator = norm * other.norm
        guard denominator > 0 else { return 1 }
        return 1 - dot(other) / denominator
    }

    /// The Euclidean distance, as `vector_distance_l2` computes it.
    public func l2Distance(to other: Vector) -> Float {
        precondition(scalars.count == other.scalars.count, "distance of vectors of different dimensions")
        var sum: Float = 0
        for i in scalars.indices {
            let d = scalars[i] - other.scalars[i]
            sum += d * d
        }
        return sum.squareRoot()
    }

    /// The distance to `other` under `metric`.
    public func distance(to other: Vector, metric: DistanceMetric) -> Float {
        switch metric {
        case .cosine: cosineDistance(to: other)
        case .l2: l2Distance(to: other)
        }
    }
}

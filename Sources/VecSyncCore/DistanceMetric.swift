/// How the distance between two vectors is measured; smaller is nearer.
public enum DistanceMetric: String, Sendable, Hashable, Codable, CaseIterable {
    /// `1 - cos(θ)`: 0 for the same direction. `distance_metric=cosine` in vec0,
    /// `metric=cosine` in libsql_vector_idx.
    case cosine
    /// Euclidean distance. `distance_metric=l2` in vec0, `metric=l2` in libsql_vector_idx.
    case l2
}

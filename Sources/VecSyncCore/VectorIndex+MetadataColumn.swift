extension VectorIndex {
    /// A canonical column copied into the index as a vec0 metadata column, so searches can
    /// filter on it during the scan (`… AND "capture_date" > ?`).
    public struct MetadataColumn: Sendable, Hashable, Codable {
        /// The type of a vec0 metadata column.
        public enum ColumnType: String, Sendable, Hashable, Codable, CaseIterable {
            /// `text`
            case text
            /// `integer`
            case integer
            /// `float`
            case float
            /// `boolean`
            case boolean
        }

        /// The column's name, the same in the canonical table and in the index.
        public var name: String
        /// Its type in the index.
        public var type: ColumnType

        /// Declares a metadata column.
        public init(_ name: String, _ type: ColumnType) {
            self.name = name
            self.type = type
        }
    }
}

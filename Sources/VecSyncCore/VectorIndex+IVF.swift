extension VectorIndex {
    /// An approximate inverted-file index of the vec0 table (`indexed by ivf(...)`): k-means
    /// lists over the embeddings, of which a query scans the `probes` nearest.
    ///
    /// It is derived data like the rest of the vec0 table: never synced, and trained with a
    /// constant seed on the rows in key order, so two replicas holding the same rows train
    /// the same lists (call `vecsync_ivf_retrain` on both after they converge).
    ///
    /// ```swift
    /// let index = VectorIndex(table: "photos", dimensions: 768, name: "photos_vec",
    ///                         ivf: .init(lists: 256, probes: 16))
    /// ```
    public struct IVF: Sendable, Hashable, Codable {
        /// The number of lists (`nlist`); nil lets training choose about √rows.
        public var lists: Int?
        /// The lists a query scans unless it says otherwise (`nprobe`); nil: the extension's
        /// default.
        public var probes: Int?

        /// Declares an ivf index.
        public init(lists: Int? = nil, probes: Int? = nil) {
            self.lists = lists
            self.probes = probes
        }

        /// `ivf(nlist=256, nprobe=16)`, as the vec0 declaration takes it.
        var declaration: String {
            let options = [lists.map { "nlist=\($0)" }, probes.map { "nprobe=\($0)" }].compactMap { $0 }
            return "ivf(\(options.joined(separator: ", ")))"
        }
    }
}

extension VectorIndex {
    /// An approximate inverted-file index of the vec0 table (`indexed by ivf(...)`): k-means
    /// lists over the embeddings, of which a query scans the `probes` nearest.
    ///
    /// It is derived data like the rest of the vec0 table: never synced, and trained with a
    /// constant seed on the rows in key order, so two replicas holding the same rows train
    /// the same lists (call ``VectorIndex/retrainIVF(_:lists:)`` on both after they converge).
    ///
    /// ```swift
    /// let index = VectorIndex(table: "photos", dimensions: 768, name: "photos_vec",
    ///                         ivf: .init(lists: 256, probes: 16))
    /// ```
    ///
    /// Every option left nil is the extension's default: about √rows lists chosen at each
    /// training, 10 probes, int8 codes re-scored from the float32 vectors, codes kept in the
    /// file.
    public struct IVF: Sendable, Hashable, Codable {
        /// What a list keeps of each row to score it before the exact re-score
        /// (`quantizer=`).
        public enum Quantizer: String, Sendable, Hashable, Codable {
            /// A byte a dimension (the default).
            case int8
            /// A bit a dimension: an eighth of int8's memory, coarser candidates.
            case binary
            /// The float32 vector itself (`quantizer=none`): the same answers as int8, more
            /// slowly.
            case float32 = "none"
        }

        /// The number of lists (`nlist`); nil lets training choose about √rows.
        public var lists: Int?
        /// The lists a query scans unless it says otherwise (`nprobe`); nil: the extension's
        /// default.
        public var probes: Int?
        /// What a list keeps of each row; nil: int8.
        public var quantizer: Quantizer?
        /// Candidates re-scored exactly per result (`oversample`); nil: 4 for int8, 16 for
        /// binary. Refused with ``Quantizer/float32``.
        public var oversample: Int?
        /// Whether a training keeps each row's code in the file (`stored_codes`), so a new
        /// process reads a list without its rows' vectors; nil: yes. `false` makes the file
        /// about as large as the exact table's (the codes are D + 8 bytes a row for int8), and
        /// a process's first queries slower where the file is not in the page cache.
        public var storesCodes: Bool?

        /// Declares an ivf index.
        public init(
            lists: Int? = nil, probes: Int? = nil, quantizer: Quantizer? = nil, oversample: Int? = nil,
            storesCodes: Bool? = nil
        ) {
            self.lists = lists
            self.probes = probes
            self.quantizer = quantizer
            self.oversample = oversample
            self.storesCodes = storesCodes
        }

        /// `ivf(nlist=256, nprobe=16)`, as the vec0 declaration takes it.
        var declaration: String {
            let options = [
                lists.map { "nlist=\($0)" }, probes.map { "nprobe=\($0)" },
                quantizer.map { "quantizer=\($0.rawValue)" }, oversample.map { "oversample=\($0)" },
                storesCodes.map { "stored_codes=\($0 ? 1 : 0)" },
            ].compactMap { $0 }
            return "ivf(\(options.joined(separator: ", ")))"
        }
    }
}

/// A name stored as text in a store column (``MessagePhase``, ``ApprovalStatus``), read by
/// ``StoredColumns``: unknown names are kept as they are, and each type says what a NULL
/// column reads as.
protocol StoredName {
    /// The name read from a column's text, or from NULL when `text` is nil.
    init(storedText text: String?)
}

import Foundation

extension ChangeSet {
    /// A table's definition as the origin knows it.
    public struct Table: Sendable, Hashable {
        /// The table's name.
        public var name: String
        /// Its primary key column.
        public var primaryKey: String
        /// The synced columns, in the order each record's ``Record/columns`` follows.
        public var columns: [String]
        /// ``TrackedTable/fingerprint`` on the origin.
        public var fingerprint: UInt64
        /// The rest of the origin's definition — key kind, declared types, authority — from
        /// which ``fingerprint`` is computed. Change sets of format 3 carry it, so a replica
        /// whose table has other columns (added, dropped or renamed since) can still merge the
        /// columns both know; with nil (formats 1 and 2) only an identical definition merges.
        public var definition: Definition?

        /// The parts of a table's definition that a fingerprint covers besides the names.
        public struct Definition: Sendable, Hashable {
            /// The storage of the key.
            public var keyKind: TrackedTable.KeyKind
            /// The declared type of each column, upper-cased, in column order.
            public var declaredTypes: [String]
            /// The table's authoritative site, if any.
            public var authority: SiteID?
            /// Whether each replica keeps its own integer ids (``TrackedTable/hasLocalKeys``):
            /// the records' keys are then identities (format 4).
            public var hasLocalKeys: Bool

            /// Creates a definition.
            public init(
                keyKind: TrackedTable.KeyKind, declaredTypes: [String], authority: SiteID?, hasLocalKeys: Bool = false
            ) {
                self.keyKind = keyKind
                self.declaredTypes = declaredTypes
                self.authority = authority
                self.hasLocalKeys = hasLocalKeys
            }
        }

        /// Creates a table definition.
        public init(
            name: String, primaryKey: String, columns: [String], fingerprint: UInt64, definition: Definition? = nil
        ) {
            self.name = name
            self.primaryKey = primaryKey
            self.columns = columns
            self.fingerprint = fingerprint
            self.definition = definition
        }

        /// The table as a tracked table, when ``definition`` is known.
        var trackedTable: TrackedTable? {
            guard let definition, definition.declaredTypes.count == columns.count else { return nil }
            return TrackedTable(
                name: name, primaryKey: primaryKey, keyKind: definition.keyKind, columns: columns,
                declaredTypes: definition.declaredTypes, authority: definition.authority,
                hasLocalKeys: definition.hasLocalKeys)
        }
    }
}

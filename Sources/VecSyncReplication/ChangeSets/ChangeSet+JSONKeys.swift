import Foundation

extension ChangeSet {
    /// The keys of a table in a change set's JSON form.
    enum JSONTableKeys: String, CodingKey {
        case name, primaryKey, columns, fingerprint, keyKind, declaredTypes, authority, localKeys
    }

    /// The keys of a record in a change set's JSON form.
    enum JSONRecordKeys: String, CodingKey {
        case table, key, causalLength, authorityCount, deleted, version, site, columns
    }

    /// The keys of a column write in a change set's JSON form.
    enum JSONColumnKeys: String, CodingKey {
        case value, version, site, authorityCount
    }
}

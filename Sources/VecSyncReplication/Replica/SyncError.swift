@_exported import VecSyncCore

/// The errors of tracking, exchanging and merging changes: another name for
/// ``VecSyncCore/VecSyncError``, the one error type every VecSync API throws.
///
/// Code written against the sync engine's own error type keeps compiling
/// (`catch SyncError.tableNotTracked(let table)`), and a `catch VecSyncError.sqlite` also
/// catches a merge's database failures. The one renamed case is a change set made from
/// another table definition: ``VecSyncCore/VecSyncError/changeSetSchemaMismatch(table:local:remote:)``
/// (`schemaMismatch(table:reason:)` is VecSyncCore's, for a local schema).
public typealias SyncError = VecSyncError

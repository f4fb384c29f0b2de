@_exported import VecSyncCore

/// The sync engine's old name for ``VecSyncCore/VecSyncError``, the one error type every
/// VecSync API throws: code written against it keeps compiling, with a warning that names
/// the type to use.
@available(*, deprecated, renamed: "VecSyncError")
public typealias SyncError = VecSyncError

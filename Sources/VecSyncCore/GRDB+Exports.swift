// VecSync's API is GRDB's: `VectorIndex.create(_:)` takes a GRDB `Database`, stores accept
// any `DatabaseWriter`. Re-exporting GRDB lets `import VecSync` (or `VecSyncCore`) name those
// types without a second import.
@_exported import GRDB

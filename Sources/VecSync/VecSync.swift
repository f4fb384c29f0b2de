// The umbrella module: `import VecSync` brings the host core (Vector, database setup,
// vector indexes), the message and photo stores, and the replication engine.
@_exported import VecSyncCore
@_exported import VecSyncReplication
@_exported import VecSyncStores

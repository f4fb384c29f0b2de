// The JSON bodies of the sync server's API live in the `VecSyncWire` module, the one home
// the server's package uses too (with the SHA-256 helper and the paging rules);
// `docs/openapi.yaml` documents each under its type's name, and the server's tests check
// the two against each other.
//
// An app sees only the bodies `HTTPTransport`'s public API returns, re-exported here (and so
// through `import VecSyncHTTP`); the request and page bodies stay the transport's business.
@_exported import struct VecSyncWire.ServerDamagedChangeSet
@_exported import struct VecSyncWire.ServerDevice
@_exported import struct VecSyncWire.ServerSnapshot
@_exported import struct VecSyncWire.ServerSnapshotPart
@_exported import struct VecSyncWire.ServerStatus

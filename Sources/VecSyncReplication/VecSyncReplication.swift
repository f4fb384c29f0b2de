// VecSyncReplication: column-level CRDT replication of rows and embeddings between
// replicas, with derived indexes refreshed after each merge.
import VecSyncCore

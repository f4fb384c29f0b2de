// VecSyncStores: the message store (threads, messages, parameter history) and the photo
// store (photos, notes, albums), with vector and full-text search, on GRDB.
import VecSyncCore

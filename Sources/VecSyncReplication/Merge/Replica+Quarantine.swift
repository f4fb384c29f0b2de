import Foundation
import GRDB

extension Replica {
    /// The rows of earlier change sets kept in quarantine (see ``QuarantinedRecord``), in the
    /// order they arrived.
    public func quarantinedRecords() throws -> [QuarantinedRecord] {
        try VecSyncError.wrap {
            try writer.read { db in
                try Quarantine.records(db)
            }
        }
    }
}

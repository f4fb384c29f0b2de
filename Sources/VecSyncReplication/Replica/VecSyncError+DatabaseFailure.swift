import Foundation

extension VecSyncError {
    /// Whether an error is the database's own failure — busy or locked, full, read-only,
    /// out of memory, interrupted, an I/O error — rather than a bad change set: such an
    /// error ends the sync instead of marking a file as refused.
    static func isDatabaseFailure(_ error: any Error) -> Bool {
        switch error {
        case VecSyncError.sqlite(_, let resultCode, _):
            // SQLITE_BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR, FULL, CANTOPEN, PROTOCOL.
            return [5, 6, 7, 8, 9, 10, 13, 14, 15].contains(resultCode & 0xff)
        case VecSyncError.io:
            return true
        default:
            return false
        }
    }
}

import Foundation
import GRDB
import VecSyncCore

extension ChangeSetMerge {
    /// How an incoming record's incarnation compares with the local one.
    enum Incarnation {
        case newer, same, older
    }

    /// What the merge decided for one record.
    struct Outcome {
        /// The clock row to keep.
        var clock: ClockRow
        /// Whether ``clock`` differs from the stored one.
        var clockChanged = false
        /// Whether the record starts a new incarnation: every column takes its value.
        var replaceAll = false
        /// The columns whose incoming write won.
        var winners: [Int] = []
        /// Columns the origin does not have, given their DEFAULT as this site's write of
        /// version 0 in a new incarnation.
        var defaulted: [Int] = []
    }
}

import Foundation
import GRDB
import VecSyncCore

extension ChangeSetMerge {
    /// How the records of one of the change set's tables merge here.
    enum TableMatch {
        /// Into the local table, through ``statements``.
        case merge
        /// Not at all for now: each record is quarantined with the reason.
        case quarantine(String)
        /// Not at all: the table was dropped here with `Replica.alter`.
        case retired
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

import Foundation

/// The stores keep times as integer milliseconds since 1970 (UTC): exact, sortable, and
/// identical on every replica.
extension Date {
    /// Milliseconds since 1970, rounded down.
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The date `milliseconds` after 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

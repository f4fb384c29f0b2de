import Foundation

/// A hybrid logical clock value: milliseconds of wall time in the high bits, a counter in
/// the low 16 bits.
///
/// Every write to a tracked table takes `max(last + 1, now << 16)`, so versions grow with
/// real time when clocks agree and never go backwards when they do not. Merging a change
/// set moves the clock past every version it carries, so a later local write supersedes
/// what this replica has seen. The capture triggers compute the same value in plain SQL,
/// which is why any SQLite client's writes carry proper versions.
public struct HybridLogicalClock: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number of low bits that hold the logical counter.
    public static let counterBits: Int64 = 16

    /// The encoded value, as stored in the clock tables.
    public let rawValue: Int64

    /// Wraps an encoded clock value.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// The clock value for `milliseconds` since 1970 with the given counter.
    public init(milliseconds: Int64, counter: Int64 = 0) {
        self.rawValue = (milliseconds << Self.counterBits) + counter
    }

    /// The wall-time part, in milliseconds since 1970.
    public var milliseconds: Int64 { rawValue >> Self.counterBits }

    /// The logical counter part.
    public var counter: Int64 { rawValue & ((1 << Self.counterBits) - 1) }

    /// The current wall time in milliseconds since 1970.
    public static func wallMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Orders clock values numerically.
    public static func < (lhs: HybridLogicalClock, rhs: HybridLogicalClock) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// `milliseconds.counter`, for messages.
    public var description: String { "\(milliseconds).\(counter)" }
}

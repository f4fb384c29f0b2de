import Foundation

/// The name of one replica of a database: a phone, a laptop, an indexer.
///
/// Every write is stamped with the site that made it, and when two writes carry the same
/// clock value the one from the greater site id wins. Site ids are compared by their UTF-8
/// bytes, so the order is the same on every platform and in SQL (`COLLATE BINARY`).
///
/// ```swift
/// let replica = try Replica(writer, site: SiteID("macbook"))
/// ```
///
/// A site id must be unique among the replicas that sync together, and one database file
/// keeps the site id it was first opened with.
public struct SiteID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The site's name, as stored in the database and carried in change sets.
    public let rawValue: String

    /// Creates a site id from its name.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a site id from a string literal: `let site: SiteID = "phone"`.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// A new random site id (a lowercase UUID), for a database that was never given one.
    public static func random() -> SiteID {
        SiteID(UUID().uuidString.lowercased())
    }

    /// The site's name.
    public var description: String { rawValue }

    /// Byte-wise order of the UTF-8 names, the tie-break of the merge's total order.
    public static func < (lhs: SiteID, rhs: SiteID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// Creates a site id from its JSON string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Writes the site id as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

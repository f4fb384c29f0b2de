import Foundation

/// The merge order: which of two writes of one column wins, the same on every replica.
extension Replica {
    /// Whether one carried column write beats another: ``wins(_:over:)`` on their tags, and
    /// under the same tag the value that ``SyncValue/precedes(_:)`` puts last.
    static func wins(_ write: ChangeSet.Column, over other: ChangeSet.Column) -> Bool {
        let tag = (write.authorityCount, write.version.rawValue, write.site)
        let otherTag = (other.authorityCount, other.version.rawValue, other.site)
        return wins(tag, over: otherTag) || (tag == otherTag && other.value.precedes(write.value))
    }

    /// The merge's total order: does a write tagged (authority count, version, site) beat
    /// the local one? The greater authority count, then the greater version, then the
    /// greater site id; a missing local tag always loses. Equal tags are normally the same
    /// write, which does not win. A site issues a version twice only when its database was
    /// restored from a backup and wrote again before learning what it had lost: the two
    /// values are then ordered by value, the same way everywhere (the merge reads the local
    /// value only for such a tie).
    static func wins(
        _ write: (authority: Int64, version: Int64, site: SiteID),
        over local: (authority: Int64, version: Int64, site: SiteID?)?
    ) -> Bool {
        guard let local, let localSite = local.site else { return true }
        if write.authority != local.authority { return write.authority > local.authority }
        if write.version != local.version { return write.version > local.version }
        return localSite < write.site
    }
}

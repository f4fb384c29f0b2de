import Foundation

/// A condition on photos for ``PhotoStore/search(similarTo:limit:filter:)``, combined with
/// `&&`:
///
/// ```swift
/// try photos.search(similarTo: v, limit: 20, filter: .album("Japan") && .takenAfter(date))
/// ```
public struct PhotoFilter: Sendable, Hashable {
    /// One condition.
    enum Condition: Sendable, Hashable {
        case albumName(String)
        case albumId(String)
        case takenAfter(Date)
        case takenBefore(Date)
        case sceneType(String)
        case mood(String)
    }

    /// The conditions, all of which must hold.
    let conditions: [Condition]

    /// No condition: every photo with an embedding.
    public static let none = PhotoFilter(conditions: [])

    /// Photos in an album with this name (any album of that name).
    public static func album(_ name: String) -> PhotoFilter { PhotoFilter(conditions: [.albumName(name)]) }

    /// Photos in the album with this id.
    public static func albumId(_ id: String) -> PhotoFilter { PhotoFilter(conditions: [.albumId(id)]) }

    /// Photos taken strictly after `date`.
    public static func takenAfter(_ date: Date) -> PhotoFilter { PhotoFilter(conditions: [.takenAfter(date)]) }

    /// Photos taken strictly before `date`.
    public static func takenBefore(_ date: Date) -> PhotoFilter { PhotoFilter(conditions: [.takenBefore(date)]) }

    /// Photos of this scene type.
    public static func sceneType(_ scene: String) -> PhotoFilter { PhotoFilter(conditions: [.sceneType(scene)]) }

    /// Photos with this mood.
    public static func mood(_ mood: String) -> PhotoFilter { PhotoFilter(conditions: [.mood(mood)]) }

    /// Both filters.
    public static func && (lhs: PhotoFilter, rhs: PhotoFilter) -> PhotoFilter {
        PhotoFilter(conditions: lhs.conditions + rhs.conditions)
    }

    /// Whether some condition is on album membership.
    var involvesAlbums: Bool {
        conditions.contains { condition in
            switch condition {
            case .albumName, .albumId: true
            default: false
            }
        }
    }
}

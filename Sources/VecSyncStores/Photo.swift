import Foundation
import VecSyncCore

/// A photo's metadata as the analysis pipeline produced it (`photos` table; PhotoBrain's
/// PhotoMetadata record). The photo itself stays in the system library; the 768-d
/// embedding is stored beside the metadata and read with ``PhotoStore/embedding(ofPhoto:)``.
public struct Photo: Sendable, Hashable, Codable, FetchableRecord {
    /// The system library's identifier (e.g. `PHAsset.localIdentifier`): the primary key.
    public var sourceId: String
    /// When the photo was taken.
    public var captureDate: Date?
    /// Latitude in degrees.
    public var latitude: Double?
    /// Longitude in degrees.
    public var longitude: Double?
    /// A place name (“Kyoto, Japan”).
    public var locationName: String?
    /// The generated description.
    public var description: String
    /// Objects seen in the photo.
    public var objects: [String]
    /// Tags.
    public var tags: [String]
    /// The mood (“calm”, “festive”).
    public var mood: String?
    /// The scene type (“beach”, “street”).
    public var sceneType: String?
    /// Text read in the photo (OCR).
    public var textDetected: String?
    /// The version of the analysis that produced these fields.
    public var analysisVersion: String
    /// When the row was last written; set by ``PhotoStore/upsert(_:embedding:)``.
    public var updatedAt: Date

    /// Creates photo metadata.
    public init(
        sourceId: String, captureDate: Date? = nil, latitude: Double? = nil, longitude: Double? = nil,
        locationName: String? = nil, description: String = "", objects: [String] = [],
        tags: [String] = [], mood: String? = nil, sceneType: String? = nil,
        textDetected: String? = nil, analysisVersion: String = "", updatedAt: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.sourceId = sourceId
        self.captureDate = captureDate
        self.latitude = latitude
        self.longitude = longitude
        self.locationName = locationName
        self.description = description
        self.objects = objects
        self.tags = tags
        self.mood = mood
        self.sceneType = sceneType
        self.textDetected = textDetected
        self.analysisVersion = analysisVersion
        self.updatedAt = updatedAt
    }

    /// Decodes a `photos` row (objects and tags are JSON arrays of strings).
    public init(row: Row) throws { try self.init(from: StoredRowDecoder(row: row, keyColumns: ["source_id"])) }

    /// The columns read by ``init(row:)``, qualified by `alias`.
    static func columns(_ alias: String) -> String {
        [
            "source_id", "capture_date", "latitude", "longitude", "location_name", "description", "objects",
            "tags", "mood", "scene_type", "text_detected", "analysis_version", "updated_at",
        ]
        .map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    static func encodeList(_ list: [String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return (try? encoder.encode(list)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    static func decodeList(_ json: String?) -> [String] {
        guard let json else { return [] }
        return (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
    }
}

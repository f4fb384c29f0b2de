import Foundation
import VecSync

extension DemoCommand {
    /// A photo of the sample library.
    private struct Sample {
        var id: String
        var topic: String
        var date: String
        var description: String
        var tags: [String]
        var scene: String
        var mood: String
        var place: String
        var ocr: String?
        var japan: Bool
    }

    private static let samples: [Sample] = [
        Sample(
            id: "PH-101", topic: "beach", date: "2023-07-14",
            description: "Sunset over the beach at Biarritz, surfers in silhouette", tags: ["beach", "sunset", "surf"],
            scene: "beach", mood: "calm", place: "Biarritz, France", ocr: nil, japan: false),
        Sample(
            id: "PH-102", topic: "beach", date: "2023-07-15", description: "Kids building a sandcastle at low tide",
            tags: ["beach", "family"], scene: "beach", mood: "joyful", place: "Biarritz, France", ocr: nil, japan: false
        ),
        Sample(
            id: "PH-103", topic: "beach", date: "2024-08-03", description: "Turquoise water and white sand in Okinawa",
            tags: ["beach", "sea"], scene: "beach", mood: "calm", place: "Okinawa, Japan", ocr: nil, japan: true),
        Sample(
            id: "PH-104", topic: "beach", date: "2023-07-20", description: "Beach umbrellas in a row on the Promenade",
            tags: ["beach", "summer"], scene: "beach", mood: "joyful", place: "Nice, France", ocr: nil, japan: false),
        Sample(
            id: "PH-105", topic: "beach", date: "2023-09-02", description: "Waves breaking on the rocks at sunset",
            tags: ["sea", "sunset"], scene: "beach", mood: "calm", place: "Brittany, France", ocr: nil, japan: false),
        Sample(
            id: "PH-201", topic: "city", date: "2024-04-05",
            description: "Shibuya crossing at night under the neon signs", tags: ["city", "night"], scene: "street",
            mood: "festive", place: "Tokyo, Japan", ocr: "SHIBUYA 109", japan: true),
        Sample(
            id: "PH-202", topic: "city", date: "2024-04-08", description: "A rainy lane in the Gion district",
            tags: ["city", "rain"], scene: "street", mood: "calm", place: "Kyoto, Japan", ocr: nil, japan: true),
        Sample(
            id: "PH-203", topic: "city", date: "2023-05-10", description: "The Paris skyline from Montmartre at sunset",
            tags: ["city", "sunset"], scene: "skyline", mood: "calm", place: "Paris, France", ocr: nil, japan: false),
        Sample(
            id: "PH-204", topic: "city", date: "2023-10-01", description: "A yellow tram climbing a hill",
            tags: ["city", "tram"], scene: "street", mood: "joyful", place: "Lisbon, Portugal", ocr: "28 Martim Moniz",
            japan: false),
        Sample(
            id: "PH-205", topic: "city", date: "2024-04-12",
            description: "The Dotonbori canal and its running man sign", tags: ["city", "night"], scene: "street",
            mood: "festive", place: "Osaka, Japan", ocr: "Glico", japan: true),
        Sample(
            id: "PH-301", topic: "mountains", date: "2024-04-10",
            description: "Mount Fuji above Lake Kawaguchi with cherry blossoms", tags: ["mountain", "lake", "sakura"],
            scene: "landscape", mood: "calm", place: "Yamanashi, Japan", ocr: nil, japan: true),
        Sample(
            id: "PH-302", topic: "mountains", date: "2023-02-11", description: "A snowy ridge above Chamonix",
            tags: ["mountain", "snow"], scene: "landscape", mood: "calm", place: "Chamonix, France", ocr: nil,
            japan: false),
        Sample(
            id: "PH-303", topic: "mountains", date: "2024-07-20",
            description: "The trail to the summit of Fuji at dawn", tags: ["mountain", "hiking"], scene: "landscape",
            mood: "joyful", place: "Shizuoka, Japan", ocr: nil, japan: true),
        Sample(
            id: "PH-304", topic: "mountains", date: "2023-08-15", description: "An alpine lake mirroring the peaks",
            tags: ["mountain", "lake"], scene: "landscape", mood: "calm", place: "Valais, Switzerland", ocr: nil,
            japan: false),
        Sample(
            id: "PH-401", topic: "food", date: "2024-04-06", description: "A bowl of tonkotsu ramen with a soft egg",
            tags: ["food", "ramen"], scene: "food", mood: "joyful", place: "Tokyo, Japan", ocr: nil, japan: true),
        Sample(
            id: "PH-402", topic: "food", date: "2024-04-07", description: "The sushi counter at Tsukiji outer market",
            tags: ["food", "sushi"], scene: "food", mood: "joyful", place: "Tokyo, Japan", ocr: "本日のおすすめ", japan: true),
        Sample(
            id: "PH-403", topic: "food", date: "2023-05-11", description: "Croissants on a café table",
            tags: ["food", "breakfast"], scene: "food", mood: "calm", place: "Paris, France", ocr: nil, japan: false),
        Sample(
            id: "PH-404", topic: "food", date: "2023-10-02", description: "Grilled sardines and a glass of vinho verde",
            tags: ["food", "fish"], scene: "food", mood: "joyful", place: "Lisbon, Portugal", ocr: nil, japan: false),
        Sample(
            id: "PH-501", topic: "pets", date: "2023-11-01", description: "Our cat asleep in a sunbeam",
            tags: ["cat", "home"], scene: "indoor", mood: "calm", place: "Home", ocr: nil, japan: false),
        Sample(
            id: "PH-502", topic: "pets", date: "2024-04-09", description: "A cat café with a dozen cats on the shelves",
            tags: ["cat", "café"], scene: "indoor", mood: "joyful", place: "Tokyo, Japan", ocr: nil, japan: true),
        Sample(
            id: "PH-503", topic: "pets", date: "2023-07-16", description: "Rex chasing the waves on the beach",
            tags: ["dog", "beach"], scene: "beach", mood: "joyful", place: "Biarritz, France", ocr: nil, japan: false),
    ]

    func runPhotos(_ database: VecSyncDatabase, clock: DemoClock) throws -> PhotoStore {
        let embedder = DemoEmbedder(dimensions: 768, spread: 0.8)
        let photos = try PhotoStore(database, dimensions: 768, clock: { clock.now() })
        Self.heading("Photos: a library that understands its photos (vec0 + FTS5, 768-d)")

        for sample in Self.samples {
            let embedding =
                sample.id == "PH-503"
                ? embedder.embed(sample.description, topic: "pets", and: "beach", weight: 0.45)
                : embedder.embed(sample.description, topic: sample.topic)
            try photos.upsert(
                Photo(
                    sourceId: sample.id, captureDate: Self.date(sample.date), locationName: sample.place,
                    description: sample.description, objects: [], tags: sample.tags, mood: sample.mood,
                    sceneType: sample.scene, textDetected: sample.ocr, analysisVersion: "demo-1"),
                embedding: embedding)
        }
        let japan = try photos.createAlbum(name: "Japan 2024", id: "album-japan")
        try photos.addPhotos(Self.samples.filter(\.japan).map(\.id), toAlbum: japan.id)
        let summer = try photos.createAlbum(name: "Summer 2023", id: "album-summer")
        try photos.addPhotos(["PH-101", "PH-102", "PH-104", "PH-503"], toAlbum: summer.id)
        try photos.addNote(
            toPhoto: "PH-101", content: "Best evening of the trip, we stayed until the last light", id: "note-1")
        try photos.addNote(toPhoto: "PH-301", content: "Worth the 5am alarm", id: "note-2")
        try photos.addNote(toPhoto: "PH-503", content: "Rex's first time at the sea", id: "note-3")
        print("\(Self.samples.count) photos in 5 topics (beach, city, mountains, food, pets), 2 albums, 3 notes.")

        func show(_ title: String, _ hits: [(photo: Photo, distance: Double)]) {
            print("\n\(title)")
            for (photo, distance) in hits {
                print(
                    "    \(Self.distance(distance))  \(photo.sourceId)  \(Self.day(photo.captureDate))  \(photo.description)"
                )
            }
            if hits.isEmpty { print("    (none)") }
        }

        let beach = embedder.embed("a day at the seaside", topic: "beach")
        show("Photos like “a day at the seaside” (nearest 5):", try photos.search(similarTo: beach, limit: 5))
        show(
            "The same, taken after 1 January 2024 (a vec0 metadata filter inside the scan):",
            try photos.search(similarTo: beach, limit: 3, filter: .takenAfter(Self.date("2024-01-01"))))
        let mountain = embedder.embed("mountain scenery", topic: "mountains")
        show(
            "“Mountain scenery” in the album “Japan 2024” taken after 1 May 2024 (album ∧ date):",
            try photos.search(
                similarTo: mountain, limit: 3, filter: .album("Japan 2024") && .takenAfter(Self.date("2024-05-01"))))
        show("Photos similar to PH-401 (the ramen bowl):", try photos.similar(toPhoto: "PH-401", limit: 3))

        print("\nFull-text search “sunset” (description, tags, OCR text, notes; BM25):")
        for (photo, rank) in try photos.search(text: "sunset", limit: 5) {
            print("    \(String(format: "%.2f", rank))  \(photo.sourceId)  \(photo.description)")
        }
        print("Full-text search “shibuya” (found in the OCR text):")
        for (photo, _) in try photos.search(text: "shibuya", limit: 3) {
            print("    \(photo.sourceId)  \(photo.description)  [OCR: \(photo.textDetected ?? "")]")
        }
        let city = embedder.embed("a city view", topic: "city")
        print("\nHybrid: text “sunset” fused with photos like “a city view” (reciprocal rank fusion):")
        for (photo, score) in try photos.search(text: "sunset", similarTo: city, limit: 4) {
            print("    \(String(format: "%.4f", score))  \(photo.sourceId)  \(photo.description)")
        }

        Self.heading("Derived indexes: verify and rebuild")
        try database.write { db in
            try db.execute(sql: "DELETE FROM photos_vec WHERE source_id = 'PH-303'")
            try db.execute(sql: "DELETE FROM photos_fts WHERE source_id = 'PH-101'")
        }
        print("Tampered: one row deleted from photos_vec, one from photos_fts.")
        func printVerification() throws {
            let (vector, text) = try photos.verifyIndexes()
            print("  verify: \(vector)")
            print("  verify: photos_fts " + (text.isEmpty ? "consistent" : "out of step for \(text)"))
        }
        try printVerification()
        try photos.rebuildIndexes()
        print("Rebuilt from the canonical rows.")
        try printVerification()
        show(
            "“Mountain scenery” in “Japan 2024” after 1 May 2024, again:",
            try photos.search(
                similarTo: mountain, limit: 3, filter: .album("Japan 2024") && .takenAfter(Self.date("2024-05-01"))))
        return photos
    }

    static func day(_ date: Date?) -> String {
        guard let date else { return "----------" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}

import Foundation
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncStores

@Suite("PhotoStore: photos, notes, albums, vector, text and hybrid search")
struct PhotoStoreTests {
    static let dims = 24
    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// 30 beach photos (ids B00…), 30 city photos (C00…), 30 forest photos (F00…), taken one
    /// a day in that order; beach photos 20… in the album “Japan”, with forest F05.
    func library(seed: UInt64) throws -> (PhotoStore, TopicEmbeddings) {
        print("seed \(seed)")
        var topics = TopicEmbeddings(dimensions: Self.dims, seed: seed)
        let clock = SteppingClock()
        let photos = try PhotoStore(VecSyncDatabase.inMemory(), dimensions: Self.dims, clock: { clock.now() })
        var day = 0.0
        for (prefix, topic, scene) in [("B", "beach", "beach"), ("C", "city", "street"), ("F", "forest", "nature")] {
            for i in 0..<30 {
                let photo = Photo(
                    sourceId: String(format: "%@%02d", prefix, i),
                    captureDate: Self.start + day * Self.day,
                    description: "A \(topic) photo number \(i)", tags: [topic],
                    mood: i.isMultiple(of: 2) ? "calm" : "festive", sceneType: scene)
                try photos.upsert(photo, embedding: topics.item(topic))
                day += 1
            }
        }
        let japan = try photos.createAlbum(name: "Japan", id: "album-japan")
        try photos.addPhotos((20..<30).map { String(format: "B%02d", $0) } + ["F05"], toAlbum: japan.id)
        return (photos, topics)
    }

    @Test func vectorSearchFindsTheTopicNearestFirst() throws {
        var (photos, topics) = try library(seed: 0x5EED_0301)
        let hits = try photos.search(similarTo: topics.centre("city"), limit: 10)
        #expect(hits.count == 10)
        #expect(hits.allSatisfy { $0.photo.sourceId.hasPrefix("C") })
        #expect(hits.map(\.distance) == hits.map(\.distance).sorted())
        #expect(hits[0].photo.sceneType == "street" && hits[0].photo.tags == ["city"])
    }

    @Test func metadataFilteredSearchReturnsExactlyLimitWhenEnoughMatch() throws {
        var (photos, topics) = try library(seed: 0x5EED_0302)
        let query = topics.centre("beach")
        // Beach photos are nearest, but only forest photos (days 60…89) are after day 59.
        let after = try photos.search(similarTo: query, limit: 20, filter: .takenAfter(Self.start + 59 * Self.day))
        #expect(after.count == 20)
        #expect(after.allSatisfy { $0.photo.sourceId.hasPrefix("F") })
        let calmForest = try photos.search(
            similarTo: query, limit: 15,
            filter: .sceneType("nature") && .mood("calm"))
        #expect(calmForest.count == 15)
        #expect(calmForest.allSatisfy { $0.photo.sceneType == "nature" && $0.photo.mood == "calm" })
        let none = try photos.search(similarTo: query, limit: 5, filter: .takenBefore(Self.start - Self.day))
        #expect(none.isEmpty)
    }

    @Test func albumFilteredSearchIsExactAndCombinesWithDates() throws {
        var (photos, topics) = try library(seed: 0x5EED_0303)
        let query = topics.centre("forest")
        let inJapan = try photos.search(similarTo: query, limit: 20, filter: .album("Japan"))
        #expect(inJapan.count == 11)
        #expect(inJapan.first?.photo.sourceId == "F05")  // the one forest photo of the album
        #expect(inJapan.map(\.distance) == inJapan.map(\.distance).sorted())
        let late = try photos.search(
            similarTo: query, limit: 5,
            filter: .album("Japan") && .takenAfter(Self.start + 24.5 * Self.day)
                && .takenBefore(Self.start + 40 * Self.day))
        #expect(late.map(\.photo.sourceId).sorted() == ["B25", "B26", "B27", "B28", "B29"])
        #expect(try photos.search(similarTo: query, limit: 5, filter: .albumId("album-japan")).count == 5)
    }

    @Test func similarToPhotoExcludesThePhotoItself() throws {
        let (photos, _) = try library(seed: 0x5EED_0304)
        let similar = try photos.similar(toPhoto: "C07", limit: 5)
        #expect(similar.count == 5)
        #expect(!similar.contains { $0.photo.sourceId == "C07" })
        #expect(similar.allSatisfy { $0.photo.sourceId.hasPrefix("C") })
        #expect(throws: VecSyncError.notFound(kind: "photo embedding", key: "nope")) {
            try photos.similar(toPhoto: "nope", limit: 1)
        }
    }

    @Test func fullTextSearchCoversDescriptionTagsOCRAndNotes() throws {
        let (photos, _) = try library(seed: 0x5EED_0305)
        var sign = try #require(try photos.photo(sourceId: "C03"))
        sign.textDetected = "Shibuya crossing"
        try photos.upsert(sign)
        try photos.addNote(toPhoto: "F11", content: "Where we saw the red fox", id: "n1")
        #expect(try photos.search(text: "shibuya", limit: 5).map(\.photo.sourceId) == ["C03"])
        #expect(try photos.search(text: "fox", limit: 5).map(\.photo.sourceId) == ["F11"])
        #expect(try photos.search(text: "forest photo", limit: 100).count == 30)
        #expect(try photos.search(text: "\"unbalanced ( * quotes", limit: 5).isEmpty)
        try photos.updateNote(id: "n1", content: "A deer, in fact")
        #expect(try photos.search(text: "fox", limit: 5).isEmpty)
        #expect(try photos.search(text: "deer", limit: 5).map(\.photo.sourceId) == ["F11"])
        try photos.deleteNote(id: "n1")
        #expect(try photos.search(text: "deer", limit: 5).isEmpty)
        // The embedding survived the metadata-only upsert.
        #expect(try photos.embedding(ofPhoto: "C03") != nil)
    }

    @Test func hybridSearchRanksPhotosFoundByBothFirst() throws {
        var (photos, topics) = try library(seed: 0x5EED_0306)
        try photos.addNote(toPhoto: "B17", content: "sunset over the water")
        try photos.addNote(toPhoto: "F02", content: "sunset through the trees")
        let hits = try photos.search(text: "sunset", similarTo: topics.centre("beach"), limit: 10)
        #expect(hits.count == 10)
        #expect(hits[0].photo.sourceId == "B17")  // in both rankings
        #expect(hits.map(\.score) == hits.map(\.score).sorted(by: >))
        #expect(hits.contains { $0.photo.sourceId == "F02" })  // text-only hit still fused in
    }

    @Test func deletingAPhotoRemovesItsNotesMembershipsAndIndexRows() throws {
        var (photos, topics) = try library(seed: 0x5EED_0307)
        try photos.addNote(toPhoto: "B25", content: "kite")
        #expect(try photos.delete(sourceId: "B25"))
        #expect(try photos.photo(sourceId: "B25") == nil)
        #expect(try photos.notes(forPhoto: "B25").isEmpty)
        #expect(try photos.photos(inAlbum: "album-japan").count == 10)
        #expect(try photos.search(text: "kite", limit: 5).isEmpty)
        #expect(
            try !photos.search(similarTo: topics.centre("beach"), limit: 40).contains { $0.photo.sourceId == "B25" })
        let (vector, text) = try photos.verifyIndexes()
        #expect(vector.isConsistent, "\(vector)")
        #expect(text.isEmpty)
    }

    @Test func albumsCRUD() throws {
        let (photos, _) = try library(seed: 0x5EED_0308)
        let album = try photos.createAlbum(name: "Favourites", id: "fav")
        try photos.addPhotos(["C01", "C02", "C01"], toAlbum: album.id)
        #expect(try photos.photos(inAlbum: "fav").map(\.sourceId).sorted() == ["C01", "C02"])
        try photos.renameAlbum(id: "fav", to: "Best")
        #expect(try photos.album(id: "fav")?.name == "Best")
        #expect(try photos.albums(containing: "C01").map(\.name) == ["Best"])
        try photos.removePhotos(["C01"], fromAlbum: "fav")
        #expect(try photos.photos(inAlbum: "fav").map(\.sourceId) == ["C02"])
        #expect(try photos.deleteAlbum(id: "fav"))
        #expect(try photos.albums().map(\.name) == ["Japan"])
        #expect(throws: VecSyncError.notFound(kind: "photo", key: "nope")) {
            try photos.addPhotos(["nope"], toAlbum: "album-japan")
        }
        let key = try photos.writer.read { db in
            try String.fetchOne(db, sql: "SELECT id FROM album_photos WHERE photo_id = 'F05'")
        }
        #expect(key == #"["album-japan","F05"]"#)
    }

    @Test func rebuildAfterDroppingTheIndexesGivesIdenticalResults() throws {
        var (photos, topics) = try library(seed: 0x5EED_0309)
        let queries = ["beach", "city", "forest"].map { topics.item($0, noise: 0.6) }
        func run() throws -> [[String]] {
            try queries.map { q in
                try photos.search(similarTo: q, limit: 12, filter: .mood("calm")).map(\.photo.sourceId)
                    + photos.search(text: "photo number 7", limit: 5).map(\.photo.sourceId)
            }
        }
        let before = try run()
        try photos.writer.write { db in
            try db.execute(sql: "DROP TABLE photos_vec")
            try db.execute(sql: "DELETE FROM photos_fts")
        }
        let (broken, brokenText) = try photos.verifyIndexes()
        #expect(!broken.exists && brokenText.count == 90)
        try photos.rebuildIndexes()
        #expect(try run() == before)
        let (vector, text) = try photos.verifyIndexes()
        #expect(vector.isConsistent && text.isEmpty)
    }

    @Test func upsertRefusesAWrongDimension() throws {
        let photos = try PhotoStore(VecSyncDatabase.inMemory(), dimensions: 768)
        #expect(throws: VecSyncError.dimensionMismatch(expected: 768, got: 2)) {
            try photos.upsert(Photo(sourceId: "PH-1"), embedding: [1, 2])
        }
        #expect(try photos.count() == 0)
    }
}

import Foundation
import Testing
import VecSync

/// The Swift example of README.md.
@Suite("README examples")
struct ReadmeExamples {
    @Test("The photo library is searched, then synced through a folder")
    func photoLibrary() throws {
        let path = try DocExample.databasePath("readme")
        let folder = try DocExample.folderPath("readme")
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let embedding = DocExample.vector(768, seed: 1)
        let query = embedding
        // snippet: readme
        let db = try VecSyncDatabase(path: path)               // a GRDB pool, extension on every connection
        let photos = try PhotoStore(db, dimensions: 768)
        try photos.upsert(Photo(sourceId: "PH-1", captureDate: date, description: "Sunset on the beach"),
                          embedding: embedding)
        let album = try photos.createAlbum(name: "Japan")
        try photos.addPhotos(["PH-1"], toAlbum: album.id)
        let nearest = try photos.search(similarTo: query, limit: 20, filter: .album("Japan"))

        let replica = try Replica(db.writer, site: "macbook")
        try replica.track("photos")
        let report = try replica.sync(through: FolderTransport(path: folder))
        // end snippet
        #expect(nearest.map(\.photo.sourceId) == ["PH-1"])
        #expect(report.pushedRows > 0)
    }
}

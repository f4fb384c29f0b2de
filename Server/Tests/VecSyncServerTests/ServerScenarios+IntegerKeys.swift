import Foundation
import GRDB
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

extension ServerScenarios {
    /// Integer keys written on every device, through the server: three replicas of
    /// `users(id INTEGER PRIMARY KEY)` and `posts(… user_id REFERENCES users(id))`, tracked
    /// without an authority, each inserting ids 1, 2, … of its own offline. Their change sets
    /// carry identities (change-set format 4); the server stores and relays them (its
    /// forged-write check reads identities as it reads other keys), and every replica ends with
    /// every user and every post, each post pointing at its own author, under ids of its own.
    static func integerKeysFromEveryDevice(_ backEnd: BackEnd) async throws {
        try await withServedSpace(backEnd, "intkeys", tokens: 3) { test, server, space, tokens, _ in
            let sites = ["mac", "phone", "tablet"]
            var replicas: [Replica] = []
            for site in sites {
                let queue = try DatabaseQueue()
                try await queue.write { db in
                    try db.execute(
                        sql: """
                            CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                            CREATE TABLE posts (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER REFERENCES users(id), title TEXT);
                            """)
                }
                let replica = try Replica(queue, site: SiteID(site))
                try replica.track("users")
                try replica.track("posts")
                // Offline: ids 1, 2 and 1, 2 on every device.
                try await queue.write { db in
                    for index in 1...2 {
                        try db.execute(sql: "INSERT INTO users (name) VALUES (?)", arguments: ["\(site)-\(index)"])
                        try db.execute(
                            sql: "INSERT INTO posts (user_id, title) VALUES (?, ?)",
                            arguments: [db.lastInsertedRowID, "by \(site)-\(index)"])
                    }
                }
                replicas.append(replica)
            }
            let transports = tokens.map { HTTPTransport(server: server.url, space: space, token: $0) }
            for _ in 0..<2 {
                for (replica, transport) in zip(replicas, transports) {
                    let report = try await blocking { try replica.sync(through: transport) }
                    #expect(report.problems.isEmpty && report.quarantined.isEmpty, "\(replica.site): \(report)")
                }
            }
            let expected = sites.flatMap { site in (1...2).map { "by \(site)-\($0)|\(site)-\($0)" } }.sorted()
            for replica in replicas {
                let rows = try await replica.writer.read { db in
                    try String.fetchAll(
                        db,
                        sql:
                            "SELECT p.title || '|' || u.name FROM posts AS p JOIN users AS u ON u.id = p.user_id ORDER BY 1"
                    )
                }
                #expect(rows == expected, "\(replica.site)")
                // Its own rows keep the ids it gave them.
                let own = try await replica.writer.read { db in
                    try String.fetchAll(db, sql: "SELECT name FROM users WHERE id <= 2 ORDER BY id")
                }
                #expect(own == ["\(replica.site)-1", "\(replica.site)-2"])
            }
        }
    }
}

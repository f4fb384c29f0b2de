import Foundation
import Testing
import VecSyncReplication
import VecSyncServer

extension ServerScenarios {
    /// Names with a NUL character — a device's site, name or platform, a pull's site, a
    /// change set's origin, a space in the path — are refused with a 4xx on both back ends
    /// (PostgreSQL's text cannot hold them: it answered 500), and the server goes on.
    static func invalidNamesAreRefused(_ backEnd: BackEnd) async throws {
        try await withServedSpace(backEnd, "names") { test, server, space, tokens, _ in
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")
            for (field, registration) in [
                ("site", ["site": "a\u{0}b", "name": "n", "platform": "p"]),
                ("name", ["site": "ok", "name": "n\u{0}", "platform": "p"]),
                ("platform", ["site": "ok", "name": "n", "platform": "\u{0}"]),
            ] {
                let answer = try await raw(
                    "POST", base.appendingPathComponent("devices"), token: tokens[0],
                    headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(registration))
                #expect(answer.status == 400, "\(backEnd), NUL in the \(field): \(answer.status)")
            }
            let pull = try await raw(
                "GET",
                base.appendingPathComponent("changesets").appending(queryItems: [.init(name: "site", value: "x\u{0}")]),
                token: tokens[0])
            #expect(pull.status == 400, "\(backEnd), NUL in a pull's site: \(pull.status)")
            let changeSet = ChangeSet(origin: SiteID("ph\u{0}one"), since: 0, through: 1)
            let body = changeSet.serialized()
            let push = try await raw(
                "POST", base.appendingPathComponent("changesets"), token: tokens[0],
                headers: ["X-VecSync-SHA256": sha256Hex(body)], body: body)
            #expect(push.status == 400, "\(backEnd), NUL in an origin: \(push.status)")
            let spaceWithNUL = try await raw(
                "GET", try #require(URL(string: server.url.absoluteString + "/v1/spaces/a%00b/status")),
                token: tokens[0])
            #expect(spaceWithNUL.status == 401, "\(backEnd), NUL in a space: \(spaceWithNUL.status)")
            #expect(try await raw("GET", base.appendingPathComponent("status"), token: tokens[0]).status == 200)
        }
    }
}

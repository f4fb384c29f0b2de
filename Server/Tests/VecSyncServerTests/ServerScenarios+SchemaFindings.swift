import Foundation
import Testing
import VecSyncServer

extension ServerScenarios {
    /// Requests that schemathesis (`scripts/fuzz-server-schema.py`) found answered wrongly,
    /// each answered as `docs/openapi.yaml` says and the server still serving afterwards.
    /// - `after=9223372036854775807`, the largest cursor the document allows, overflowed
    ///   `after + 1` and killed the process (SIGILL) for every space: an empty page now.
    static func schemaFindingsAreAnswered(_ backEnd: BackEnd) async throws {
        try await withServedSpace(backEnd, "schema") { test, server, space, tokens, _ in
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")
            for after in [Int64.max, Int64.max - 1] {
                let page = try await raw(
                    "GET",
                    base.appendingPathComponent("changesets").appending(queryItems: [
                        .init(name: "after", value: String(after)), .init(name: "limit", value: "100"),
                    ]),
                    token: tokens[0])
                #expect(page.status == 200, "\(backEnd), after=\(after): \(page.status)")
                #expect((page.json?["changeSets"] as? [Any])?.isEmpty == true, "\(backEnd), after=\(after)")
                #expect(page.json?["hasMore"] as? Bool == false, "\(backEnd), after=\(after)")
            }
            #expect(try await raw("GET", base.appendingPathComponent("status"), token: tokens[0]).status == 200)
        }
    }
}

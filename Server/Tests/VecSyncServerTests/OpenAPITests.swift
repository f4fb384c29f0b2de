import Foundation
import Testing
import VecSyncServer

/// `docs/openapi.yaml` documents exactly the routes the server answers.
@Suite("OpenAPI document")
struct OpenAPITests {
    /// The repository: Server/Tests/VecSyncServerTests/<this file> is four levels down.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../..").standardized

    /// The document, read from the repository.
    static func document() throws -> String {
        try String(contentsOf: repository.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
    }

    /// Every `METHOD /path` under `paths:`.
    static func documentedOperations(_ text: String) throws -> Set<String> {
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        let paths = try MiniYAML.read(text)["paths"]
        var operations: Set<String> = []
        for path in paths?.keys ?? [] {
            for key in paths?[path]?.keys ?? [] where methods.contains(key) {
                operations.insert("\(key.uppercased()) \(path)")
            }
        }
        return operations
    }

    @Test func documentListsExactlyTheServedRoutes() throws {
        let documented = try Self.documentedOperations(try Self.document())
        let served = Set(SyncServer.routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(!served.isEmpty)
        #expect(
            documented == served,
            "documented only: \(documented.subtracting(served)); served only: \(served.subtracting(documented))")
    }

    @Test func documentSaysTLSIsTerminatedByAProxy() throws {
        let text = try Self.document()
        #expect(text.contains("TLS is terminated by a reverse proxy"))
        #expect(text.contains("bearer"))
    }

    /// Each documented operation of a space is answered (401 without a token: the route
    /// exists and is guarded), and a path the document lacks is 404.
    @Test func everyDocumentedRouteAnswersAndNeedsAToken() async throws {
        let test = try await TestStore.make(.sqlite)
        let server = try await RunningServer.start(test.store)
        for operation in try Self.documentedOperations(try Self.document()).sorted()
        where operation.contains("/v1/spaces/") {
            let parts = operation.split(separator: " ", maxSplits: 1)
            let path = parts[1].replacingOccurrences(of: "{space}", with: "some-space").replacingOccurrences(
                of: "{seq}", with: "1")
            let answer = try await raw(String(parts[0]), server.url.appendingPathComponent(String(path.dropFirst())))
            #expect(answer.status == 401, "\(operation): \(answer.status)")
        }
        let unknown = try await raw("GET", server.url.appendingPathComponent("v1/spaces/some-space/secrets"))
        #expect(unknown.status == 404)
        await server.stop()
        await test.close()
    }

    /// Health, readiness and version answer without a token: a load balancer's checks.
    @Test func healthReadinessAndVersionNeedNoToken() async throws {
        let test = try await TestStore.make(.sqlite)
        let server = try await RunningServer.start(test.store)
        let health = try await raw("GET", server.url.appendingPathComponent("health"))
        #expect(health.status == 200 && health.json?["status"] as? String == "ok")
        // Readiness gives the store 5 s; under the whole suite's load on two cores a first
        // probe may miss it (503 not-ready), and a load balancer probes again.
        var ready = try await raw("GET", server.url.appendingPathComponent("ready"))
        for _ in 0..<3 where ready.status == 503 && ready.errorCode == "not-ready" {
            ready = try await raw("GET", server.url.appendingPathComponent("ready"))
        }
        #expect(
            ready.status == 200 && ready.json?["status"] as? String == "ready",
            "\(ready.status) \(String(decoding: ready.body, as: UTF8.self))")
        let version = try await raw("GET", server.url.appendingPathComponent("version"))
        #expect(version.status == 200 && version.json?["version"] as? String == SyncServer.version)
        await server.stop()
        await test.close()
    }

    @Test func sha256MatchesAKnownDigest() {
        #expect(sha256Hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

import Foundation
import Testing
import VecSyncServer

/// `docs/openapi.yaml` documents exactly the routes the server answers.
@Suite("OpenAPI document")
struct OpenAPITests {
    /// The document, read from the repository.
    static func document() throws -> String {
        // Server/Tests/VecSyncServerTests/<file>: the repository is four levels up.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..")
            .standardized
        return try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
    }

    /// Every `METHOD /path` under `paths:`: a path is a key indented by two spaces, a method
    /// a key indented by four.
    static func documentedOperations(_ text: String) -> Set<String> {
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty {
                inPaths = line == "paths:"
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let key = String(line.dropFirst(4).dropLast())
                if methods.contains(key), let path { operations.insert("\(key.uppercased()) \(path)") }
            }
        }
        return operations
    }

    @Test func documentListsExactlyTheServedRoutes() throws {
        let documented = Self.documentedOperations(try Self.document())
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
        for operation in Self.documentedOperations(try Self.document()).sorted()
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
        let ready = try await raw("GET", server.url.appendingPathComponent("ready"))
        #expect(ready.status == 200 && ready.json?["status"] as? String == "ready")
        let version = try await raw("GET", server.url.appendingPathComponent("version"))
        #expect(version.status == 200 && version.json?["version"] as? String == SyncServer.version)
        await server.stop()
        await test.close()
    }

    @Test func sha256MatchesAKnownDigest() {
        #expect(sha256Hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

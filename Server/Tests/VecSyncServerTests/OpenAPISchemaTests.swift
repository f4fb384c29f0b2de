import Foundation
import Testing
import VecSyncServer

/// `docs/openapi.yaml` documents every JSON body as the server and the client encode it: for
/// each type of `VecSyncWire` (``Wire/bodies``) the schema of the same name lists exactly its
/// properties, with their JSON types, and requires exactly the ones that are always sent.
@Suite("OpenAPI schemas")
struct OpenAPISchemaTests {
    static func check(_ text: String? = nil) throws -> SchemaCheck {
        SchemaCheck(document: try MiniYAML.read(text ?? OpenAPITests.document()))
    }

    @Test(arguments: Wire.bodies.map { $0.schemaName })
    func wireBodyMatchesItsSchema(_ name: String) throws {
        let body = try #require(Wire.bodies.first { $0.schemaName == name })
        let problems = try Self.check().problems(of: body)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// No schema without a wire type: a body documented only would go unchecked.
    @Test func everySchemaIsAWireBody() throws {
        let documented = Set(try Self.check().schemaNames)
        let bodies = Set(Wire.bodies.map { $0.schemaName })
        #expect(!bodies.isEmpty)
        #expect(
            documented == bodies,
            "documented only: \(documented.subtracting(bodies).sorted()); Swift only: \(bodies.subtracting(documented).sorted())"
        )
    }

    /// Every struct of `Sources/VecSyncWire` is a body the check knows (``Wire/bodies``).
    @Test func everyWireStructIsListed() throws {
        let folder = OpenAPITests.repository.appendingPathComponent("Sources/VecSyncWire")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        var declared: Set<String> = []
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("public struct ") {
                declared.insert(String(line.dropFirst("public struct ".count).prefix { $0.isLetter || $0.isNumber }))
            }
        }
        #expect(declared.count >= 9)
        #expect(declared == Set(Wire.bodies.map { $0.schemaName }), "declared: \(declared.sorted())")
    }

    /// The check itself: a property on one side only, a type changed, a property required on
    /// one side only, each is reported.
    @Test func aFieldOnOneSideOnlyIsReported() throws {
        let text = try OpenAPITests.document()
        let device = "    ServerDevice:\n      type: object\n"
        let properties = "      properties:\n        site:\n          type: string\n"
        #expect(text.contains(device) && text.contains(device + "      required: [site, name,"))

        // Documented only.
        let documentedOnly = text.replacingOccurrences(
            of: "      required: [site, name, platform, registeredAt, head, changeSets, rows, bytes]\n" + properties,
            with: "      required: [site, name, platform, registeredAt, head, changeSets, rows, bytes]\n" + properties
                + "        nickname:\n          type: string\n")
        #expect(documentedOnly != text)
        #expect(
            try Self.check(documentedOnly).problems(of: ServerDevice.self) == [
                "ServerDevice.nickname: documented, but not encoded"
            ])

        // Encoded only.
        let check = try Self.check()
        var fields = try #require(try SchemaCheck.encoded(ServerDevice.example) as? [String: Any])
        let schema = try #require(check.schema(named: "ServerDevice"))
        #expect(check.problems(fields, schema, at: "ServerDevice").isEmpty)
        fields["nickname"] = "Ana"
        #expect(
            check.problems(fields, schema, at: "ServerDevice") == ["ServerDevice.nickname: encoded, but not documented"]
        )
        fields["nickname"] = nil
        fields["head"] = "42"
        #expect(
            check.problems(fields, schema, at: "ServerDevice") == [
                "ServerDevice.head: encoded as string, documented as integer"
            ])
        fields["head"] = true
        #expect(
            check.problems(fields, schema, at: "ServerDevice") == [
                "ServerDevice.head: encoded as boolean, documented as integer"
            ])

        // Required on one side only.
        let headOptional = text.replacingOccurrences(
            of: "required: [site, name, platform, registeredAt, head, changeSets, rows, bytes]",
            with: "required: [site, name, platform, registeredAt, changeSets, rows, bytes]")
        #expect(
            try Self.check(headOptional).problems(of: ServerDevice.self) == [
                "ServerDevice.head: required by the Swift type, optional in the schema"
            ])
    }

    /// The reader fails loudly on what it does not read, naming the line.
    @Test func readerRefusesWhatItDoesNotRead() {
        #expect(throws: MiniYAMLError.self) { try MiniYAML.read("a:\n  b: {c: 1}\n") }
        #expect(throws: MiniYAMLError.self) { try MiniYAML.read("a: 1\n    b: 2\nc: 3\n") }
        #expect(throws: MiniYAMLError.self) { try MiniYAML.read("a: 1\na: 2\n") }
    }
}

/// A JSON body of the sync server's HTTP API: encoded as it is (keys are the property
/// names), documented in `docs/openapi.yaml` under `components/schemas` by the type's own
/// name. The server's test suite encodes each one's ``example`` and checks its keys, which
/// of them are required and their JSON types against that schema.
public protocol WireBody: Codable, Sendable {
    /// A value with every optional property set: what the schema check encodes.
    static var example: Self { get }
    /// Optional properties that the schema nonetheless lists as required: every current
    /// server sends them, while a client still accepts answers of older servers without them.
    static var optionalForOlderServers: Set<String> { get }
}

extension WireBody {
    /// None, unless a type names some.
    public static var optionalForOlderServers: Set<String> { [] }

    /// The name of its schema in `docs/openapi.yaml`: the type's name.
    public static var schemaName: String { String(describing: Self.self) }
}

/// What both ends of the sync server's HTTP API must spell the same: the header and media
/// type of change set bodies, and every JSON body type (``WireBody``), each documented in
/// `docs/openapi.yaml`.
public enum Wire {
    /// The header carrying a change set's hex SHA-256 (``sha256Hex(_:)``), both ways.
    public static let sha256Header = "X-VecSync-SHA256"
    /// The media type of a serialized change set (or snapshot), both ways.
    public static let changeSetMediaType = "application/vnd.vecsync.changeset"

    /// Every JSON body type of the API, each one checked against its schema.
    public static let bodies: [any WireBody.Type] = [
        DeviceRegistration.self, ServerDevice.self, ServerDamagedChangeSet.self, PushResult.self,
        ServerChangeSet.self, ServerChangeSetPage.self, ServerStatus.self, ServerSnapshot.self, ServerSnapshotPart.self, ServerErrorBody.self,
    ]
}

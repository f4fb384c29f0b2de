/// A device announcing itself (`POST /v1/spaces/{space}/devices`, schema
/// `DeviceRegistration`).
public struct DeviceRegistration: WireBody, Hashable {
    /// The device's sync site id: the origin of every change set it pushes.
    public var site: String
    /// A name for people ("Ana's iPhone").
    public var name: String
    /// The platform ("iOS", "macOS", "Linux", …).
    public var platform: String

    /// A registration.
    public init(site: String, name: String, platform: String) {
        self.site = site
        self.name = name
        self.platform = platform
    }

    /// A phone registering.
    public static let example = DeviceRegistration(site: "phone-1", name: "Ana's iPhone", platform: "iOS")
}

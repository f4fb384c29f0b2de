/// What one device did.
struct DeviceResult: Sendable {
    var latencies: [String: [Double]] = [:]
    var failures = 0
    var pushedBytes = 0
    var pulledBytes = 0
}

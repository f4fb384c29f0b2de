/// What one device did.
struct DeviceResult: Sendable {
    var latencies: [String: [Double]] = [:]
    var failures = 0
    /// Failed requests by status (0: no answer).
    var failedStatuses: [Int: Int] = [:]
    var pushedBytes = 0
    var pulledBytes = 0
}

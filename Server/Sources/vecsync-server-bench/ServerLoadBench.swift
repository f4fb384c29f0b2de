// A bounded load test of vecsync-server on loopback: N simulated devices push change sets
// and pull everyone else's for a fixed time, through one or two server processes on SQLite
// or PostgreSQL. Prints throughput, latency percentiles and each server's resident memory.
//
// Usage (see bench/server/README.md; bench/server/run.sh builds and runs both back ends):
//   vecsync-server-bench --server-binary .build/release/vecsync-server --devices 100 --seconds 60
//   vecsync-server-bench --postgres postgres://user@127.0.0.1:5432/db --instances 2
//
// Every request goes to 127.0.0.1. Each device stops at the deadline or after
// --max-rounds rounds, whichever comes first; the servers are stopped with SIGTERM.
import ArgumentParser
import Foundation
import ServerFixtures
import VecSyncReplication
import VecSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@main
struct ServerLoadBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vecsync-server-bench",
        abstract: "Load-test vecsync-server on loopback: devices pushing and pulling for a fixed time.")

    @Option(help: "The vecsync-server executable.")
    var serverBinary = ".build/release/vecsync-server"

    @Option(help: "A PostgreSQL URL; without it each run uses a new SQLite store in a temporary folder.")
    var postgres: String?

    @Option(help: "Server processes sharing the store (devices are spread over them).")
    var instances = 1

    @Option(help: "Simulated devices.")
    var devices = 100

    @Option(help: "Seconds of load.")
    var seconds = 60.0

    @Option(help: "The servers' rate limit, requests a second per token (0: off); 50 is their default.")
    var rate = 50.0

    @Option(
        help:
            "Idle connections held open to each server for the whole run (connected, never sending; reopened when the server closes them)."
    )
    var idleConnections = 0

    @Option(
        help:
            "Slow uploads to each server for the whole run: pushes announcing 64 MiB with another space's token, a byte every 200 ms, started again when the server ends them."
    )
    var slowUploads = 0

    @Option(help: "Clients of each server without a valid token, each asking for a space's status every --tokenless-interval-ms.")
    var tokenless = 0

    @Option(help: "Milliseconds between two requests of one tokenless client.")
    var tokenlessIntervalMs = 100

    @OptionGroup var workload: Workload

    func validate() throws {
        guard (1...8).contains(instances) else { throw ValidationError("--instances must be in 1...8") }
        guard (1...1000).contains(devices) else { throw ValidationError("--devices must be in 1...1000") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
        guard rate >= 0 else { throw ValidationError("--rate cannot be negative") }
        guard (0...5000).contains(idleConnections) else {
            throw ValidationError("--idle-connections must be in 0...5000")
        }
        guard (0...100).contains(slowUploads) else { throw ValidationError("--slow-uploads must be in 0...100") }
        guard (0...1000).contains(tokenless) else { throw ValidationError("--tokenless must be in 0...1000") }
        guard (1...60_000).contains(tokenlessIntervalMs) else {
            throw ValidationError("--tokenless-interval-ms must be in 1...60000")
        }
    }

    func run() async throws {
        print("seed \(workload.seed)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vecsync-server-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: any ServerStore =
            try postgres.map { try PostgresServerStore(url: $0) }
            ?? SQLiteServerStore(directory: directory)
        try await store.prepare()
        let (space, tokens) = try await makeSpace(store, "bench", tokens: devices, at: 0)
        let (intruderSpace, intruderTokens) = try await makeSpace(store, "intruder", tokens: 1, at: 0)
        await store.close()

        var servers: [ServerProcess] = []
        defer { for server in servers { server.stop() } }
        for _ in 0..<instances {
            servers.append(
                try ServerProcess.start(binary: serverBinary, postgres: postgres, data: directory.path, rate: rate))
        }
        // Per server, when asked for: one set of each kind of client that works for nothing.
        func each<T>(_ count: Int, _ make: (Int) -> T) -> [T] {
            count > 0 ? servers.compactMap { $0.url.port.map(make) } : []
        }
        let idle = each(idleConnections) { IdleConnections(count: idleConnections, port: UInt16($0)) }
        defer { for holder in idle { holder.stop() } }
        let slow = each(slowUploads) {
            SlowUploads(
                count: slowUploads, port: $0, path: "/v1/spaces/\(intruderSpace)/changesets", token: intruderTokens[0])
        }
        defer { for uploads in slow { uploads.stop() } }
        let strangers = each(tokenless) {
            TokenlessClients(
                count: tokenless, port: $0, path: "/v1/spaces/\(space)/status",
                interval: .milliseconds(tokenlessIntervalMs))
        }
        defer { for clients in strangers { clients.stop() } }
        let running = servers
        let sampler = Task { () -> [Int] in
            var peaks = Array(repeating: 0, count: running.count)
            while !Task.isCancelled {
                for (index, server) in running.enumerated() { peaks[index] = max(peaks[index], server.residentBytes()) }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return peaks
        }

        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = devices
        configuration.timeoutIntervalForRequest = 60
        let session = URLSession(configuration: configuration)
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let results = await withTaskGroup(of: DeviceResult.self) { group in
            for index in 0..<devices {
                let device = Device(
                    index: index, token: tokens[index],
                    base: servers[index % servers.count].url.appendingPathComponent("v1/spaces/\(space)"),
                    session: session, workload: workload)
                group.addTask { await device.run(until: deadline) }
            }
            var all: [DeviceResult] = []
            for await result in group { all.append(result) }
            return all
        }
        let elapsed = start.duration(to: .now)
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        sampler.cancel()
        let peaks = await sampler.value
        let finals = servers.map { $0.residentBytes() }
        let idleCounts = idle.map(\.counts)
        let slowCounts = slow.map(\.counts)
        let strangerCounts = strangers.map(\.counts)
        let failedStatuses = results.reduce(into: [Int: Int]()) { all, result in
            all.merge(result.failedStatuses, uniquingKeysWith: +)
        }

        let latencies = results.reduce(into: [String: [Double]]()) { all, result in
            for (operation, values) in result.latencies { all[operation, default: []] += values }
        }
        let requests = latencies.values.reduce(0) { $0 + $1.count }
        let failures = results.reduce(0) { $0 + $1.failures }
        let pushedBytes = results.reduce(0) { $0 + $1.pushedBytes }
        let pulledBytes = results.reduce(0) { $0 + $1.pulledBytes }
        let backEnd = postgres == nil ? "SQLite" : "PostgreSQL"
        print(
            "\(backEnd), \(instances) instance(s), \(devices) devices, \(String(format: "%.1f", elapsedSeconds)) s, "
                + "\(workload.rows) rows of \(workload.dimensions)-d per change set")
        for (index, counts) in idleCounts.enumerated() {
            print(
                "server \(index + 1): \(counts.open) idle connections open at the end, "
                    + "\(counts.reopened) closed by the server and reopened, \(counts.failed) connection attempts failed"
            )
        }
        func statuses(_ counts: [Int: Int]) -> String {
            counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
        }
        for (index, counts) in slowCounts.enumerated() {
            print(
                "server \(index + 1): \(counts.started) slow uploads started, \(counts.cut) ended by the server "
                    + "(answers: \(statuses(counts.answers)); 0: closed without one)")
        }
        for (index, counts) in strangerCounts.enumerated() {
            print(
                "server \(index + 1): tokenless requests answered \(statuses(counts.answers)), "
                    + "\(counts.failed) without an answer")
        }
        print("devices' failed requests by status (0: no answer): \(statuses(failedStatuses))")
        print(
            String(
                format: "requests: %d (%.0f/s), failed: %d; pushed %.1f MB (%.2f MB/s), downloaded %.1f MB (%.2f MB/s)",
                requests, Double(requests) / elapsedSeconds, failures, Double(pushedBytes) / 1e6,
                Double(pushedBytes) / 1e6 / elapsedSeconds, Double(pulledBytes) / 1e6,
                Double(pulledBytes) / 1e6 / elapsedSeconds))
        print("| operation | count | per second | p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|---|---|")
        for operation in ["register", "push", "list", "download"] {
            let values = (latencies[operation] ?? []).sorted()
            guard !values.isEmpty else { continue }
            func percentile(_ p: Double) -> Double {
                values[min(values.count - 1, Int(Double(values.count - 1) * p))] * 1000
            }
            print(
                String(
                    format: "| %@ | %d | %.0f | %.1f | %.1f | %.1f |", operation, values.count,
                    Double(values.count) / elapsedSeconds, percentile(0.5), percentile(0.99), (values.last ?? 0) * 1000)
            )
        }
        for (index, peak) in peaks.enumerated() {
            print(
                String(
                    format: "server %d: peak RSS %.1f MB, at the end %.1f MB", index + 1, Double(peak) / 1e6,
                    Double(finals[index]) / 1e6))
        }
    }
}

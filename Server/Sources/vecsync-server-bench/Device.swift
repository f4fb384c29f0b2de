import Foundation
import VecSyncReplication
import VecSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One simulated device: registers (again each second while refused), then in rounds
/// pushes a change set of the workload's `rows` rows with random embeddings (from its seed
/// plus the device's index), lists the change sets after its cursor and downloads a few of
/// them.
struct Device: Sendable {
    let index: Int
    let token: String
    /// The space's API root on one server, `…/v1/spaces/NAME`.
    let base: URL
    let session: URLSession
    let workload: Workload

    var site: SiteID { SiteID("device-\(index)") }

    func run(until deadline: ContinuousClock.Instant) async -> DeviceResult {
        var result = DeviceResult()
        var random = SplitMix64(seed: workload.seed &+ UInt64(index))
        let registration =
            (try? JSONEncoder().encode(["site": site.rawValue, "name": "bench \(index)", "platform": "bench"]))
            ?? Data()
        // Refused (429 while its address is held for other clients' bad tokens, 503 while the
        // server is busy), a device registers again a second later, as the client does.
        while await request(
            "register", "POST", base.appendingPathComponent("devices"), body: registration,
            headers: ["Content-Type": "application/json"], into: &result) == nil
        {
            guard ContinuousClock.now + .seconds(1) < deadline else { return result }
            try? await Task.sleep(for: .seconds(1))
        }
        var cursor: Int64 = 0
        var sequence: Int64 = 0
        for _ in 0..<workload.maxRounds where ContinuousClock.now < deadline {
            let body = changeSet(since: sequence, random: &random).serialized()
            if await request(
                "push", "POST", base.appendingPathComponent("changesets"), body: body,
                headers: ["X-VecSync-SHA256": sha256Hex(body), "Content-Type": "application/vnd.vecsync.changeset"],
                into: &result) != nil
            {
                sequence += Int64(workload.rows)
                result.pushedBytes += body.count
            }
            guard
                var components = URLComponents(
                    url: base.appendingPathComponent("changesets"), resolvingAgainstBaseURL: false)
            else { break }
            components.queryItems = [
                URLQueryItem(name: "after", value: String(cursor)), URLQueryItem(name: "limit", value: "100"),
                URLQueryItem(name: "site", value: site.rawValue),
            ]
            guard let listURL = components.url,
                let page = await request("list", "GET", listURL, into: &result),
                let json = try? JSONSerialization.jsonObject(with: page) as? [String: Any],
                let entries = json["changeSets"] as? [[String: Any]]
            else { continue }
            let others = entries.filter { ($0["origin"] as? String) != site.rawValue }.compactMap { $0["seq"] as? Int }
            for seq in others.suffix(workload.downloads) {
                if let bytes = await request(
                    "download", "GET", base.appendingPathComponent("changesets/\(seq)"), into: &result)
                {
                    result.pulledBytes += bytes.count
                }
            }
            if let next = json["nextCursor"] as? Int { cursor = Int64(next) }
        }
        return result
    }

    /// A change set of the workload's `rows` rows of `photos(id, embedding)` after `since`.
    func changeSet(since: Int64, random: inout SplitMix64) -> ChangeSet {
        let table = ChangeSet.Table(name: "photos", primaryKey: "id", columns: ["embedding"], fingerprint: 0x5EED)
        let clock = HybridLogicalClock(milliseconds: 1_700_000_000_000 + since)
        let records = (0..<workload.rows).map { row -> ChangeSet.Record in
            var embedding = Data(capacity: workload.dimensions * 4)
            for _ in 0..<workload.dimensions {
                var value = Float(Double(random.next() >> 11) / Double(1 << 53) * 2 - 1).bitPattern.littleEndian
                withUnsafeBytes(of: &value) { embedding.append(contentsOf: $0) }
            }
            return ChangeSet.Record(
                table: 0, key: .text("\(site.rawValue)-\(since + Int64(row) + 1)"), causalLength: 1,
                rowVersion: clock, rowSite: site,
                columns: [ChangeSet.Column(version: clock, site: site, value: .blob(embedding))])
        }
        return ChangeSet(
            origin: site, since: since, through: since + Int64(workload.rows), tables: [table], records: records)
    }

    /// One timed request; the body on a 2xx answer, nil (and a failure counted) otherwise.
    func request(
        _ operation: String, _ method: String, _ url: URL, body: Data? = nil, headers: [String: String] = [:],
        into result: inout DeviceResult
    ) async -> Data? {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let started = ContinuousClock.now
        do {
            let (data, response) = try await session.data(for: request)
            let took = started.duration(to: .now)
            result.latencies[operation, default: []].append(
                Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18)
            guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
                result.failures += 1
                result.failedStatuses[(response as? HTTPURLResponse)?.statusCode ?? 0, default: 0] += 1
                return nil
            }
            return data
        } catch {
            result.failures += 1
            result.failedStatuses[0, default: 0] += 1
            return nil
        }
    }
}

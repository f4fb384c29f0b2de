import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asking an origin again for changes a reader could not merge.
///
/// How it works: at the end of a pull, a reader whose cursor for an origin stops before a
/// damaged, refused or absent file records the gap (``Replica/gaps()``) and leaves a
/// request in its own subfolder, `.request-<origin's folder>`: a few lines naming the
/// range after its cursor and the file it could not merge (with its size and CRC32C, so a
/// second damage of the same range is a new request). Dot-names are never change sets, so
/// other readers pass over it. The origin, on each push, reads the requests naming it;
/// for each one it has not served (its answer is noted in `.served-<reader's folder>` in
/// its own subfolder) it removes the named file when that file is damaged in its own
/// subfolder too, and publishes its changes after the requested cursor again from its
/// clock tables — the rows' current state, in bounded files that run from that cursor
/// without a hole. The reader's next pull merges them in order and its cursor passes the
/// gap; the request is then removed. Nothing is lost: the clock tables hold every row's
/// latest change, and merges are idempotent.
extension FolderTransport {
    /// The name of the request a reader leaves for the origin whose subfolder is `origin`.
    static func requestName(for origin: String) -> String { ".request-\(origin)" }

    /// The name of the note an origin keeps of the last request it served for `reader`.
    static func servedName(for reader: String) -> String { ".served-\(reader)" }

    /// The most bytes of a request read.
    static let requestLimit = 4096

    /// Records, for each origin listed by a pull, what the reader still waits for, reports
    /// it to `events`, and leaves or removes the request for it.
    func noteGaps(
        _ replica: Replica, origins: [(entry: String, site: SiteID, files: [(url: URL, since: Int64, through: Int64)])],
        damaged: [SiteID: [String: String]], events: SyncEventSink
    ) throws {
        let received = Dictionary(try replica.peers().map { ($0.site, $0.received) }, uniquingKeysWith: max)
        let ownDirectory = folder.appendingPathComponent(Self.folderName(for: replica.site), isDirectory: true)
        for (entry, site, files) in origins {
            let cursor = received[site] ?? 0
            let after = files.filter { $0.through > cursor }
            var gap: SyncGap?
            var request: String?
            if let covering = after.first(where: { $0.since <= cursor }) {
                let name = covering.url.lastPathComponent
                let reason = damaged[site]?["\(entry)/\(name)"] ?? "not merged"
                gap = SyncGap(origin: site, since: cursor, through: covering.through, reason: "\(name): \(reason)")
                let bytes = (try? Self.readRegularFile(covering.url)) ?? Data()
                let crc = String(CRC32C.checksum([UInt8](bytes)), radix: 16)
                request =
                    "since \(cursor)\nthrough \(covering.through)\nfile \(name)\nsize \(bytes.count)\ncrc \(crc)\n"
            } else if let next = after.map(\.since).min() {
                gap = SyncGap(origin: site, since: cursor, through: next, reason: "no file holds them")
                request = "since \(cursor)\nthrough \(next)\n"
            }
            try replica.setGap(gap, for: site)
            let requestURL = ownDirectory.appendingPathComponent(Self.requestName(for: entry))
            if let request {
                try leave(request, at: requestURL, in: ownDirectory)
            } else if Self.entryKind(requestURL) == .regularFile {
                try? FileManager.default.removeItem(at: requestURL)
            }
            if let gap { try events.send(.waiting(gap)) }
        }
    }

    /// Writes `text` at `url` unless it is there already, through a temporary name.
    private func leave(_ text: String, at url: URL, in directory: URL) throws {
        if Self.entryKind(url) == .regularFile, let held = try? Self.readRegularFile(url), held == Data(text.utf8) {
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
            try Data(text.utf8).write(to: temporary)
            if rename(temporary.path, url.path) != 0 {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temporary)
                throw VecSyncError.io(path: url.path, reason: reason)
            }
        } catch let error as VecSyncError {
            throw error
        } catch {
            throw VecSyncError.io(path: url.path, reason: "cannot write the request: \(error.localizedDescription)")
        }
    }

    /// The cursor and file a request names, or nil when it is not a request.
    static func parseRequest(_ text: String) -> (since: Int64, file: String?)? {
        var since: Int64?
        var file: String?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "since":
                guard let value = Int64(parts[1]), value >= 0 else { return nil }
                since = value
            case "file": file = String(parts[1])
            case "through", "size", "crc": continue
            default: return nil
            }
        }
        return since.map { ($0, file) }
    }

    /// Serves every request naming this replica that it has not served yet: removes the
    /// named file when it is damaged here too, and publishes the changes after the
    /// requested cursor again (see the top of this file). Returns the files and rows written.
    func serveRequests(
        _ replica: Replica, into directory: URL, excluding excluded: Set<SiteID>, events: SyncEventSink
    ) throws -> (files: Int, rows: Int) {
        let own = Self.folderName(for: replica.site)
        var written = 0
        var rows = 0
        for entry in ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        where entry != own && !entry.hasPrefix(".") {
            let reader = folder.appendingPathComponent(entry, isDirectory: true)
            guard Self.entryKind(reader) == .directory, Self.site(fromFolderName: entry) != nil else { continue }
            let requestURL = reader.appendingPathComponent(Self.requestName(for: own))
            guard Self.entryKind(requestURL) == .regularFile, Self.regularFileSize(requestURL) <= Self.requestLimit,
                let bytes = try? Self.readRegularFile(requestURL), let text = String(data: bytes, encoding: .utf8),
                let request = Self.parseRequest(text)
            else { continue }
            let servedURL = directory.appendingPathComponent(Self.servedName(for: entry))
            if let served = try? Self.readRegularFile(servedURL), served == bytes { continue }
            if let file = request.file, Self.range(ofFileName: file) != nil {
                let url = directory.appendingPathComponent(file)
                if Self.entryKind(url) == .regularFile {
                    let intact =
                        (try? ChangeSet(serialized: Self.readRegularFile(url))).map { $0.origin == replica.site }
                        ?? false
                    if !intact { try? FileManager.default.removeItem(at: url) }
                }
            }
            var reached = request.since
            var sent: [(rows: Int, bytes: Int)] = []
            try replica.forEachChangeSet(since: request.since, excluding: excluded) { batch in
                var batch = batch
                batch.since = reached
                let size = try write(batch, into: directory)
                reached = batch.through
                written += 1
                rows += batch.records.count
                sent.append((batch.records.count, size))
            }
            try leave(text, at: servedURL, in: directory)
            try events.pushed(sent)
        }
        return (written, rows)
    }
}

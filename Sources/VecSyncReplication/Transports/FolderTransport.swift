import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Exchanges change sets through a shared folder: a cloud drive folder, a network share, a
/// USB stick. Any number of replicas may use the same folder, in any order.
///
/// Each replica writes its change sets into its own subfolder, one file per batch, named
/// by the range of its sequence numbers it covers (`00000000000000000000-00000000000000000042.vcs`).
/// A file is written under a temporary dot-name and renamed into place, so no reader ever
/// sees half a file. A writer starts from its push cursor for the folder, kept in its
/// database, and leaves out rows the folder already holds from their authors (no echo).
/// Readers take every other subfolder's files past their cursor (kept in
/// the database), in order; they skip unknown and temporary files and files they already
/// merged, and report a corrupt or incompatible file and skip it without applying any of it.
/// Symbolic links, devices, pipes and sockets in the folder are skipped without being
/// opened or followed: only regular files and real subfolders are read. A failure of the
/// database itself (locked, disk full, I/O error) is not a bad file: the pull stops and
/// throws it, with every group merged before it committed.
///
/// ```swift
/// let folder = FolderTransport(URL(fileURLWithPath: "/Volumes/Shared/photos-sync"))
/// let report = try replica.sync(through: folder)
/// print(report)   // "pushed 12 rows in 1 file; pulled 3 files from 2 sites: …"
/// ```
public struct FolderTransport: SyncTransport {
    /// The shared folder.
    public let folder: URL

    /// A transport through `folder`, which is created when missing.
    public init(_ folder: URL) {
        self.folder = folder
    }

    /// A transport through the folder at `path`.
    public init(path: String) {
        self.folder = URL(fileURLWithPath: path)
    }

    /// The file name extension of change set files.
    public static let fileExtension = "vcs"

    /// The subfolder of `site`: its id with every byte outside `[A-Za-z0-9_-]` and a
    /// leading dot percent-encoded, so any site id is a safe, reversible folder name.
    public static func folderName(for site: SiteID) -> String {
        var name = ""
        for byte in site.rawValue.utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if byte < 0x80, scalar.isLetter || scalar.isNumber || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            {
                name.append(scalar)
            } else {
                name += String(format: "%%%02X", byte)
            }
        }
        return name
    }

    /// The site whose subfolder is `name`, or nil when `name` is not one.
    static func site(fromFolderName name: String) -> SiteID? {
        guard !name.hasPrefix(".") else { return nil }
        guard let decoded = name.removingPercentEncoding, !decoded.isEmpty else { return nil }
        return SiteID(decoded)
    }

    /// `<since>-<through>.vcs`, zero-padded so names sort in sequence order.
    static func fileName(since: Int64, through: Int64) -> String {
        "\(padded(since))-\(padded(through)).\(fileExtension)"
    }

    private static func padded(_ value: Int64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// The range in a change set file name, or nil for any other file.
    static func range(ofFileName name: String) -> (since: Int64, through: Int64)? {
        guard name.hasSuffix(".\(fileExtension)"), !name.hasPrefix(".") else { return nil }
        let parts = name.dropLast(fileExtension.count + 1).split(separator: "-")
        guard parts.count == 2, parts.allSatisfy({ $0.count == 20 && $0.allSatisfy(\.isASCII) }),
            let since = Int64(parts[0]), let through = Int64(parts[1]), since <= through
        else { return nil }
        return (since, through)
    }

    /// What a directory entry is, without following a symbolic link.
    enum EntryKind {
        case regularFile, directory, other
    }

    /// The kind of the entry at `url`, read with `lstat`, so a link is `other`.
    static func entryKind(_ url: URL) -> EntryKind {
        var status = stat()
        guard lstat(url.path, &status) == 0 else { return .other }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The bytes of the regular file at `url`. It is opened without following a link and
    /// without blocking, and checked to be a regular file once open, so a link or a pipe
    /// put in its place after the listing is refused, never read.
    static func readRegularFile(_ url: URL) throws -> Data {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw VecSyncError.io(path: url.path, reason: "cannot open: \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw VecSyncError.io(path: url.path, reason: "not a regular file; not read")
        }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw VecSyncError.io(path: url.path, reason: "cannot read: \(error.localizedDescription)")
        }
    }

    /// Change set files in a subfolder, in sequence order; the count of other entries; and
    /// the names of links and special files with a change set's name, which are not read.
    func files(in directory: URL) -> (
        files: [(url: URL, since: Int64, through: Int64)], unknown: Int, notRegular: [String]
    ) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var files: [(url: URL, since: Int64, through: Int64)] = []
        var unknown = 0
        var notRegular: [String] = []
        for name in names {
            if let range = Self.range(ofFileName: name) {
                let url = directory.appendingPathComponent(name)
                if Self.entryKind(url) == .regularFile {
                    files.append((url, range.since, range.through))
                } else {
                    notRegular.append(name)
                }
            } else if !name.hasPrefix(".") {
                unknown += 1
            }
        }
        files.sort { ($0.since, $0.through) < ($1.since, $1.through) }
        return (files, unknown, notRegular.sorted())
    }

    /// The name of this folder in `vecsync_published`, where a replica keeps its push cursor.
    public var destination: String { folder.standardizedFileURL.path }

    /// Where the last file a replica wrote here ends: the next file starts there.
    var lastFileCursor: SyncCursor { .lastFile(destination) }

    /// The greatest file range this transport trusts: a name claiming more than this beyond
    /// the replica's own sequence is a stray file, not a lost future to move above.
    package static let plausibleRange: Int64 = 1 << 32

    /// The end of the run of files covering `(0, x]` without a gap, in sequence order.
    static func contiguousEnd(_ files: [(url: URL, since: Int64, through: Int64)]) -> Int64 {
        var end: Int64 = 0
        for file in files where file.since <= end { end = max(end, file.through) }
        return end
    }

    /// Merges back `replica`'s own change sets held here past its push cursor, through
    /// `claimed`: after a restore from a backup, the lost future no peer sends back (see
    /// ``Replica/recoverLostChanges(_:)``), in bounded transactions. A file that is not a
    /// readable change set of this site (a stray or damaged file) is skipped: the peers that
    /// merged it keep its rows.
    func recoverLostChanges(
        of replica: Replica, from ownFiles: [(url: URL, since: Int64, through: Int64)], after published: Int64,
        through claimed: Int64
    ) throws {
        var groups = BoundedMerge<ChangeSet>(replica) { group, _ in _ = try replica.recoverLostChanges(group) }
        for file in ownFiles where file.through > published && file.through <= claimed {
            guard let data = try? Self.readRegularFile(file.url), let changeSet = try? ChangeSet(serialized: data),
                changeSet.origin == replica.site
            else { continue }
            try groups.add(changeSet, rows: changeSet.records.count, bytes: data.count)
        }
        try groups.finish()
    }

    /// The sites whose changes this folder already holds as far as `replica` has merged
    /// them: each other subfolder whose files cover, without a gap from 0, at least the
    /// replica's cursor for that site. Rows last written only by such sites are not pushed
    /// again (every reader gets them from their author's subfolder).
    func sitesHeldHere(by replica: Replica) throws -> Set<SiteID> {
        let own = Self.folderName(for: replica.site)
        let received = Dictionary(try replica.peers().map { ($0.site, $0.received) }, uniquingKeysWith: max)
        var held: Set<SiteID> = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where entry != own {
            let directory = folder.appendingPathComponent(entry, isDirectory: true)
            guard Self.entryKind(directory) == .directory, let site = Self.site(fromFolderName: entry) else { continue }
            if Self.contiguousEnd(files(in: directory).files) >= received[site] ?? 0 { held.insert(site) }
        }
        return held
    }

    /// This replica's own subfolder, made when missing.
    private func ownDirectory(of replica: Replica) throws -> URL {
        let directory = folder.appendingPathComponent(Self.folderName(for: replica.site), isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw VecSyncError.io(path: directory.path, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        return directory
    }

    /// The end of this replica's files in its subfolder (`files`), ignoring a file that ends
    /// implausibly far past anything it made (a stray file, not its own).
    private func claimedEnd(
        of files: [(url: URL, since: Int64, through: Int64)], replica: Replica, published: Int64
    ) throws -> Int64 {
        let latest = try replica.currentSequence()
        return files.map(\.through).filter { $0 <= max(latest, published) + Self.plausibleRange }.max() ?? 0
    }

    /// Before a push (see ``SyncTransport/recoverLostChanges(of:events:)``): when the
    /// subfolder holds files past the push cursor — the database was restored from a backup
    /// after writing them, or a stray file sits there — takes back this replica's own
    /// changes those files hold (its lost future, ``recoverLostChanges(of:from:after:through:)``).
    public func recoverLostChanges(of replica: Replica, events: SyncEventSink = SyncEventSink()) throws
        -> LostChanges?
    {
        let directory = try ownDirectory(of: replica)
        let published = try replica.cursor(.push(destination))
        let ownFiles = files(in: directory).files
        let claimed = try claimedEnd(of: ownFiles, replica: replica, published: published)
        guard claimed > published else { return nil }
        try recoverLostChanges(of: replica, from: ownFiles, after: published, through: claimed)
        return LostChanges(published: published, claimed: claimed, pushCursor: .push(destination))
    }

    /// Writes every change of `replica` after its push cursor for this folder (kept in the
    /// database, never read from file names), in bounded batches, and moves the cursor;
    /// then publishes again what readers asked for (see ``FolderTransport`` requests).
    ///
    /// Rows whose every column was last written by a site whose own files here already hold
    /// them are left out: a replica never echoes back what it received. A batch whose rows
    /// were all left out is not written, and the next file runs from the end of the last one
    /// written, so the files cover the sequence without a hole. The subfolder must hold no
    /// file of this replica past the cursor: ``recoverLostChanges(of:events:)`` first (a sync
    /// does).
    public func push(_ replica: Replica, events: SyncEventSink = SyncEventSink()) throws -> (files: Int, rows: Int) {
        let directory = try ownDirectory(of: replica)
        let published = try replica.cursor(.push(destination))
        let ownFiles = files(in: directory).files
        let claimed = try claimedEnd(of: ownFiles, replica: replica, published: published)
        if claimed > published {
            throw VecSyncError.lostChangesNotRecovered(destination: destination, published: published, held: claimed)
        }
        let excluded = try sitesHeldHere(by: replica)
        var written = 0
        var rows = 0
        var sent: [(rows: Int, bytes: Int)] = []
        var reached = published
        // The next file starts where the last file written ends (before the cursor when the
        // last batches were all left out), so the files hold no hole a reader would wait at.
        // Before any file was written under this version, the files here tell where.
        let lastFile = try replica.cursor(lastFileCursor)
        var since = min(published, lastFile > 0 ? lastFile : Self.contiguousEnd(ownFiles))
        do {
            let end = try replica.forEachChangeSet(since: published, excluding: excluded) { batch in
                var batch = batch
                batch.since = since
                let size = try write(batch, into: directory)
                reached = batch.through
                since = batch.through
                written += 1
                rows += batch.records.count
                sent.append((batch.records.count, size))
            }
            reached = max(reached, end)
        } catch {
            if reached > published { try replica.setCursor(.push(destination), to: reached) }
            if written > 0 { try replica.setCursor(lastFileCursor, to: since) }
            throw error
        }
        if reached > published { try replica.setCursor(.push(destination), to: reached) }
        if since != lastFile && written > 0 { try replica.setCursor(lastFileCursor, to: since) }
        try events.pushed(sent)
        let served = try serveRequests(replica, into: directory, excluding: excluded, events: events)
        return (written + served.files, rows + served.rows)
    }

    /// Writes `batch` into `directory` under a temporary dot-name, then renames it into
    /// place. A file of that name already there is replaced only when its bytes differ.
    /// Returns the file's size.
    @discardableResult
    func write(_ batch: ChangeSet, into directory: URL) throws -> Int {
        let name = Self.fileName(since: batch.since, through: batch.through)
        let temporary = directory.appendingPathComponent(".\(name).\(UUID().uuidString).tmp")
        let destination = directory.appendingPathComponent(name)
        do {
            let bytes = batch.serialized()
            if Self.entryKind(destination) == .regularFile, (try? Self.readRegularFile(destination)) == bytes {
                return bytes.count
            }
            try bytes.write(to: temporary)
            if rename(temporary.path, destination.path) != 0 {
                throw VecSyncError.io(path: destination.path, reason: String(cString: strerror(errno)))
            }
            return bytes.count
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw VecSyncError.io(
                path: destination.path, reason: "cannot write the change set: \(error.localizedDescription)")
        }
    }

    /// Merges every other replica's files past this replica's cursor for it, in order, in
    /// bounded transactions (see ``Replica/Options/maximumMergeRows``): each commit holds
    /// whole files with their cursors, so a pull cut short keeps every commit and the next
    /// one goes on from there. When a group fails, its files are merged one by one, so a
    /// file that cannot be merged is reported alone and the others still land.
    ///
    /// An origin whose cursor stops before a damaged, refused or absent file is recorded as
    /// waiting (``Replica/gaps()``, reported as ``SyncEvent/waiting(_:)``), and a request
    /// for that range is left in this replica's subfolder; the origin publishes the range
    /// again on its next push (``push(_:events:)``), and the next pull merges it.
    public func pull(into replica: Replica, events: SyncEventSink = SyncEventSink()) throws -> (
        merges: [MergeReport], problems: [String], unknownFiles: Int
    ) {
        let own = Self.folderName(for: replica.site)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let cursors = Dictionary(try replica.peers().map { ($0.site, $0.received) }, uniquingKeysWith: max)
        var merges: [MergeReport] = []
        var problems: [String] = []
        var unknown = 0
        // Every origin's files past its cursor, listed first so the bytes to read are known.
        var origins: [(entry: String, site: SiteID, files: [(url: URL, since: Int64, through: Int64)])] = []
        var expectedBytes = 0
        for entry in entries.sorted() where entry != own && !entry.hasPrefix(".") {
            let directory = folder.appendingPathComponent(entry, isDirectory: true)
            guard Self.entryKind(directory) == .directory, let site = Self.site(fromFolderName: entry) else {
                unknown += 1
                continue
            }
            try replica.addPeer(site)
            let listing = files(in: directory)
            unknown += listing.unknown
            for name in listing.notRegular {
                problems.append("\(entry)/\(name): skipped: a symbolic link or special file, not read")
            }
            let cursor = cursors[site] ?? 0
            let files = listing.files.filter { $0.through > cursor }
            expectedBytes += files.reduce(0) { $0 + Self.regularFileSize($1.url) }
            origins.append((entry, site, listing.files))
        }
        events.expect(bytes: expectedBytes)

        // Files of each origin that could not be read or merged, by file name.
        var damaged: [SiteID: [String: String]] = [:]
        var groups = BoundedMerge<(name: String, changeSet: ChangeSet)>(replica) { group, bytes in
            let results = try replica.mergeGroup(group.map(\.changeSet), bytes: bytes, events: events)
            for (item, result) in zip(group, results) {
                switch result {
                case .success(let report): merges.append(report)
                case .failure(let error):
                    problems.append("\(item.name): refused: \(error)")
                    damaged[item.changeSet.origin, default: [:]][item.name] = "refused: \(error)"
                }
            }
        }
        for (entry, site, files) in origins {
            let cursor = cursors[site] ?? 0
            for file in files where file.through > cursor {
                let name = "\(entry)/\(file.url.lastPathComponent)"
                let changeSet: ChangeSet
                let bytes: Data
                do {
                    bytes = try Self.readRegularFile(file.url)
                    changeSet = try ChangeSet(serialized: bytes)
                } catch {
                    problems.append("\(name): skipped: \(error)")
                    damaged[site, default: [:]][name] = "\(error)"
                    events.passed(bytes: Self.regularFileSize(file.url))
                    continue
                }
                guard changeSet.origin == site else {
                    problems.append("\(name): skipped: made by '\(changeSet.origin)', not '\(site)'")
                    damaged[site, default: [:]][name] = "made by '\(changeSet.origin)'"
                    events.passed(bytes: bytes.count)
                    continue
                }
                try groups.add((name, changeSet), rows: changeSet.records.count, bytes: bytes.count)
            }
        }
        try groups.finish()
        try noteGaps(replica, origins: origins, damaged: damaged, events: events)
        return (merges, problems, unknown)
    }

    /// Size of the regular file at `url`, 0 when it cannot be read.
    static func regularFileSize(_ url: URL) -> Int {
        var status = stat()
        guard lstat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
        return Int(status.st_size)
    }
}

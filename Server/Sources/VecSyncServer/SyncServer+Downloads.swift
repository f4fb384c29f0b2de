import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import VecSyncWire

/// Downloads of change sets and snapshots, whole or one byte range (`Range`), streamed from
/// the store a part at a time: each part is read when the connection has taken the one
/// before (Hummingbird's body writer waits while the client does not read), so a download
/// holds about one part in the server however large the body is and however slowly it is
/// read; 40 unread downloads of a 60 MB change set hold 40 parts, not 2.4 GB.
///
/// A change set is checked against its SHA-256 before it is served, in a pass of its own
/// over the same parts, until this process has found it intact (``VerifiedBodies``): a full
/// download, or a range from byte 0 (the first of a ranged download). After that, a full
/// download is hashed as it streams, the bytes it sends and no more: found damaged once its
/// last part is read (its bytes changed at rest since), the change set is marked damaged and
/// forgotten as intact before that part goes, so the client's own SHA-256 check refuses this
/// answer and the next download gets 409 `damaged`. So every full download is checked, and a change set sent to many devices
/// is read once per download, not twice, and a download its client leaves costs no hashing
/// of the rest. A body replaced in the store while it streams (a repair, a newer snapshot)
/// ends the answer short, so the client sees a broken download and retries.
extension SyncServer {
    /// The bytes read from the store at once.
    static let downloadPartBytes = 1 << 20

    func downloadChangeSet(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let grant = try await authorize(request, context)
        let seq = try Self.sequenceNumber(context)
        let slot = try downloadSlot(grant)
        guard let entry = try await store.changeSets(inSpace: grant.spaceID, after: seq - 1, limit: 1).first,
            entry.seq == seq
        else {
            throw APIError(
                status: .notFound, code: "not-found", message: "no change set \(seq) in space '\(grant.spaceName)'")
        }
        let spaceID = grant.spaceID
        let range = try Self.range(of: request, size: Int(entry.size))
        let hashed = range?.lowerBound ?? 0 == 0 ? try await checkIntegrity(of: entry, spaceID: spaceID) : false
        let store = self.store
        let checkWhole = range == nil && !hashed ? wholeCheck(of: entry, spaceID: spaceID) : nil
        return Self.stream(
            size: Int(entry.size), range: range, sha256: entry.sha256, holding: slot, checkWhole: checkWhole
        ) { part in
            try await store.changeSetBytes(inSpace: spaceID, seq: seq, range: part)
        }
    }

    /// What a full download hashed as it streamed does with the SHA-256 of what it sent:
    /// when it is not the change set's, forgets it as intact, marks it damaged (the next
    /// download gets 409 `damaged`) and logs it.
    private func wholeCheck(of entry: ServerChangeSet, spaceID: Int64) -> @Sendable (String) async -> Void {
        let (store, verified, logger) = (self.store, self.verified, self.logger)
        return { actual in
            guard actual != entry.sha256 else { return }
            verified.remove(VerifiedBodies.key(spaceID: spaceID, seq: entry.seq, sha256: entry.sha256))
            do {
                try await store.markDamaged(inSpace: spaceID, seq: entry.seq, sha256: entry.sha256)
            } catch {
                logger.warning("change set \(entry.seq) could not be marked damaged: \(error)")
            }
            logger.error(
                "change set \(entry.seq) (\(entry.origin) \(entry.since)-\(entry.through)) was sent damaged: its bytes no longer match its SHA-256 \(entry.sha256); marked damaged"
            )
        }
    }

    /// A place for one more download of the grant's token, held until its answer is done
    /// with; 429 `too-many-downloads` when the token has ``Limits/downloadsPerToken`` in flight.
    func downloadSlot(_ grant: TokenGrant) throws -> DownloadSlot {
        guard let slot = downloads.take(grant.tokenID) else {
            throw APIError(
                status: .tooManyRequests, code: "too-many-downloads",
                message:
                    "this token has \(downloads.perToken) downloads in flight, the most it may have at once; retry when one ends",
                headers: [.retryAfter: "1"])
        }
        return slot
    }

    /// Refuses to serve a change set whose stored bytes no longer match their SHA-256 (damaged
    /// at rest): marks it damaged in the store, so that the status tells its origin to push its
    /// range again (``PushRule`` then replaces it), and answers 409 `damaged`, which a client
    /// does not retry. Hashed a part at a time; once found intact, not again (returns false
    /// then: a full download is hashed as it streams instead).
    func checkIntegrity(of entry: ServerChangeSet, spaceID: Int64) async throws -> Bool {
        let key = VerifiedBodies.key(spaceID: spaceID, seq: entry.seq, sha256: entry.sha256)
        if verified.contains(key) { return false }
        var hasher = SHA256()
        var offset = 0
        let size = Int(entry.size)
        while offset < size {
            // Nothing is written while this runs: a shutdown past its deadline stops it here.
            if connections.closedAll { throw CancellationError() }
            let part = offset..<min(offset + Self.downloadPartBytes, size)
            guard let bytes = try await store.changeSetBytes(inSpace: spaceID, seq: entry.seq, range: part),
                bytes.count == part.count
            else { throw Self.replaced("change set \(entry.seq)") }
            hasher.update(data: bytes)
            offset = part.upperBound
        }
        let actual = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        guard actual != entry.sha256 else {
            verified.insert(key)
            return true
        }
        try await store.markDamaged(inSpace: spaceID, seq: entry.seq, sha256: entry.sha256)
        logger.error(
            "change set \(entry.seq) (\(entry.origin) \(entry.since)-\(entry.through)) does not match its SHA-256 \(entry.sha256): marked damaged"
        )
        throw APIError(
            status: .conflict, code: "damaged",
            message:
                "change set \(entry.seq) (\(entry.origin) \(entry.since)-\(entry.through)) is damaged on the server: its stored bytes do not match their SHA-256 \(entry.sha256); its origin re-publishes the range on its next sync, pull again after that"
        )
    }

    func describeSnapshot(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let grant = try await authorize(request, context)
        guard let entry = try await store.snapshotEntry(inSpace: grant.spaceID) else {
            throw APIError(
                status: .notFound, code: "no-snapshot", message: "space '\(grant.spaceName)' has no snapshot yet")
        }
        return try JSONResponse.make(entry)
    }

    /// The space's snapshot, whole or one byte range of it, streamed from the store; 409
    /// `in-parts` for one made in parts.
    func downloadSnapshot(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let (grant, entry) = try await currentSnapshot(request, context)
        guard entry.parts == nil else {
            throw APIError(
                status: .conflict, code: "in-parts",
                message:
                    "the snapshot through \(entry.seq) is made in \(entry.parts?.count ?? 0) parts: download each from snapshot/\(entry.seq)/parts/{part}"
            )
        }
        return try stream(snapshot: entry, part: nil, size: Int(entry.size), sha256: entry.sha256, grant, request)
    }

    /// One part of the space's snapshot made in parts, whole or one byte range of it.
    func downloadSnapshotPart(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let (grant, entry) = try await currentSnapshot(request, context)
        let text = context.parameters.get("part") ?? ""
        guard let part = Int(text), part >= 0 else { throw APIError.malformed("'\(text)' is not a part number") }
        guard let parts = entry.parts, parts.indices.contains(part) else {
            throw APIError(
                status: .notFound, code: "not-found",
                message: entry.parts == nil
                    ? "the snapshot through \(entry.seq) is one change set: download snapshot/\(entry.seq)"
                    : "the snapshot through \(entry.seq) has parts 0 to \((entry.parts?.count ?? 1) - 1), not \(part)")
        }
        return try stream(snapshot: entry, part: part, size: Int(parts[part].size), sha256: parts[part].sha256, grant, request)
    }

    /// The grant of the request and the space's snapshot, which must be the one through the
    /// path's `seq` (404 otherwise: a newer one replaced it).
    private func currentSnapshot(_ request: Request, _ context: SyncRequestContext) async throws
        -> (TokenGrant, ServerSnapshot)
    {
        let grant = try await authorize(request, context)
        let seq = try Self.sequenceNumber(context)
        guard let entry = try await store.snapshotEntry(inSpace: grant.spaceID), entry.seq == seq else {
            throw APIError(
                status: .notFound, code: "not-found",
                message: "space '\(grant.spaceName)' has no snapshot through \(seq) (a newer one may have replaced it)")
        }
        return (grant, entry)
    }

    /// The snapshot's body (`part` nil) or one of its parts, streamed from the store.
    private func stream(
        snapshot entry: ServerSnapshot, part: Int?, size: Int, sha256: String, _ grant: TokenGrant, _ request: Request
    ) throws -> Response {
        let range = try Self.range(of: request, size: size)
        let slot = try downloadSlot(grant)
        let (store, spaceID, seq) = (self.store, grant.spaceID, entry.seq)
        return Self.stream(size: size, range: range, sha256: sha256, holding: slot) { bytes in
            try await store.snapshotBytes(inSpace: spaceID, seq: seq, part: part, range: bytes)
        }
    }

    /// The byte range the request's `Range` asks for of `size` bytes; nil without one; 416
    /// `bad-range` when it is not one satisfiable range.
    static func range(of request: Request, size: Int) throws -> Range<Int>? {
        guard let header = request.headers[.range] else { return nil }
        guard let range = ByteRange.parse(header, size: size) else {
            throw APIError(
                status: .rangeNotSatisfiable, code: "bad-range",
                message: "'\(header)' is not one satisfiable byte range of \(size) bytes",
                headers: [.contentRange: "bytes */\(size)"])
        }
        return range
    }

    /// 200 with a body of `size` bytes, or 206 with `range` of it, read by `read` a part at a
    /// time as the connection takes them; `sha256` (of the whole) in `X-VecSync-SHA256` and as
    /// the ETag. The answer holds `slot` until it is released. A whole body (no `range`) is
    /// hashed as it goes when `checkWhole` is given, which gets its hex SHA-256 before the
    /// last part is sent.
    static func stream(
        size: Int, range: Range<Int>?, sha256: String, holding slot: DownloadSlot,
        checkWhole: (@Sendable (String) async -> Void)? = nil,
        read: @escaping @Sendable (Range<Int>) async throws -> Data?
    ) -> Response {
        let wanted = range ?? 0..<size
        let body = ResponseBody(contentLength: wanted.count) { writer in
            defer { withExtendedLifetime(slot) {} }
            var hasher = range == nil && checkWhole != nil ? SHA256() : nil
            var offset = wanted.lowerBound
            while offset < wanted.upperBound {
                let part = offset..<min(offset + downloadPartBytes, wanted.upperBound)
                guard let bytes = try await read(part), bytes.count == part.count else {
                    throw replaced("the body")
                }
                hasher?.update(data: bytes)
                if part.upperBound == wanted.upperBound, let digest = hasher?.finalize() {
                    // Before the last part goes: a client holding the whole body finds the
                    // damage recorded.
                    await checkWhole?(digest.map { String(format: "%02x", $0) }.joined())
                }
                try await writer.write(ByteBuffer(bytes: bytes))
                offset = part.upperBound
            }
            try await writer.finish(nil)
        }
        var headers: HTTPFields = [
            .contentType: changeSetMediaType,
            sha256Header: sha256,
            .acceptRanges: "bytes",
            .eTag: "\"\(sha256)\"",
        ]
        if let range { headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)" }
        return Response(status: range == nil ? .ok : .partialContent, headers: headers, body: body)
    }

    /// A body replaced in the store while it was read.
    static func replaced(_ what: String) -> APIError {
        APIError(
            status: .serviceUnavailable, code: "busy", message: "\(what) changed while it was read; retry",
            headers: [.retryAfter: "1"])
    }
}

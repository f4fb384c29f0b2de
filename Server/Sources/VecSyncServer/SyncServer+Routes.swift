import Foundation
import HTTPTypes
import Hummingbird
import VecSyncReplication
import VecSyncWire

/// The routes. Every one but `/health`, `/ready` and `/version` is under `/v1/spaces/{space}`
/// and needs `Authorization: Bearer <token>` with a live token of that space;
/// `openapi.yaml` documents them.
extension SyncServer {
    /// The header carrying a body's hex SHA-256, both ways.
    static let sha256Header = HTTPField.Name(Wire.sha256Header)!
    /// The media type of a serialized change set.
    static let changeSetMediaType = Wire.changeSetMediaType

    /// One route: its method, its path as `docs/openapi.yaml` writes it, and its handler.
    public struct Route: Sendable {
        /// The HTTP method.
        public let method: HTTPRequest.Method
        /// The path, parameters in braces (`/v1/spaces/{space}/status`).
        public let path: String
        let handler: @Sendable (SyncServer, Request, SyncRequestContext) async throws -> Response
    }

    /// Every route the server answers; `docs/openapi.yaml` documents exactly these.
    public static let routes: [Route] = [
        Route(method: .get, path: "/health") { _, _, _ in try JSONResponse.make(["status": "ok"]) },
        Route(method: .get, path: "/ready") { try await $0.ready($1, $2) },
        Route(method: .get, path: "/version") { _, _, _ in try JSONResponse.make(["version": SyncServer.version]) },
        Route(method: .get, path: "/metrics") { try await $0.serveMetrics($1, $2) },
        Route(method: .post, path: "/v1/spaces/{space}/devices") { try await $0.registerDevice($1, $2) },
        Route(method: .post, path: "/v1/spaces/{space}/changesets") { try await $0.pushChangeSet($1, $2) },
        Route(method: .get, path: "/v1/spaces/{space}/changesets") { try await $0.listChangeSets($1, $2) },
        Route(method: .get, path: "/v1/spaces/{space}/changesets/{seq}") { try await $0.downloadChangeSet($1, $2) },
        Route(method: .get, path: "/v1/spaces/{space}/status") { try await $0.status($1, $2) },
        Route(method: .get, path: "/v1/spaces/{space}/snapshot") { try await $0.describeSnapshot($1, $2) },
        Route(method: .get, path: "/v1/spaces/{space}/snapshot/{seq}") { try await $0.downloadSnapshot($1, $2) },
        Route(method: .get, path: "/v1/spaces/{space}/snapshot/{seq}/parts/{part}") {
            try await $0.downloadSnapshotPart($1, $2)
        },
    ]

    /// The router with every route of ``routes``.
    public func makeRouter() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        router.add(middleware: ResponseCompression(metrics: metrics))
        for route in Self.routes {
            // Hummingbird writes a parameter as `:name`.
            let path = route.path.split(separator: "/").map { part in
                part.hasPrefix("{") && part.hasSuffix("}") ? ":" + part.dropFirst().dropLast() : part
            }.joined(separator: "/")
            router.on(RouterPath(path), method: route.method) { request, context in
                try await route.handler(self, request, context)
            }
        }
        return router
    }

    /// The grant of the request's bearer token, checked against the space in the path and
    /// the token's rate limit. A token of another space is refused like an unknown one, so
    /// a device learns nothing about spaces it cannot open. Each refusal counts against the
    /// client address (``Limits/authFailuresPerSecond``); an address past its limit is held
    /// (see ``countingAuthFailures(_:_:_:)``).
    func authorize(_ request: Request, _ context: SyncRequestContext) async throws -> TokenGrant {
        try await countingAuthFailures(request, context) { try await grant(of: request, context) }
    }

    /// Runs `check`, counting a 401 from it against the client address. An address past its
    /// limit of requests without a valid token is held: its request gets 429 without `check`
    /// (after ``Limits/heldAnswerDelay`` while places are plentiful), unless its bearer token
    /// is one this process found valid, or, while ``Limits/heldLookupsPerSecond`` allows over
    /// all held addresses, a well-formed one.
    func countingAuthFailures<T>(
        _ request: Request, _ context: SyncRequestContext, _ check: () async throws -> T
    ) async throws -> T {
        let client = ClientAddress.of(request, context, trustForwardedFor: limits.trustForwardedFor)
        let wait = await authFailures.wait(
            client, perSecond: limits.authFailuresPerSecond, burst: limits.authFailureBurst)
        var mayGoOn = false
        if wait > 0, let token = Self.bearerToken(request), token.hasPrefix(AccessToken.prefix) {
            let known = await knownTokens.contains(AccessToken.hash(token))
            mayGoOn =
                known
                ? true
                : await heldLookups.allow(
                    "", perSecond: limits.heldLookupsPerSecond, burst: Int(limits.heldLookupsPerSecond.rounded(.up)))
        }
        if wait > 0 && !mayGoOn {
            if limits.heldAnswerDelay > .zero, connections.count < connections.maximum / 2 {
                try? await Task.sleep(for: limits.heldAnswerDelay)
            }
            throw APIError(
                status: .tooManyRequests, code: "rate-limited",
                message:
                    "too many requests without a valid token from \(client); retry after \(wait) s",
                headers: [.retryAfter: String(wait)])
        }
        do {
            return try await check()
        } catch let error as APIError where error.status == .unauthorized {
            _ = await authFailures.allow(
                client, perSecond: limits.authFailuresPerSecond, burst: limits.authFailureBurst)
            throw error
        }
    }

    /// `GET /metrics`: ``ServerMetrics`` in Prometheus's text format, to a request bearing the
    /// metrics token (`serve --metrics-token`, env `VECSYNC_METRICS_TOKEN`); 403 when none is
    /// set, 401 for another token (counted as a request without a valid token).
    func serveMetrics(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        guard let expected = metricsTokenHash else {
            throw APIError(
                status: .forbidden, code: "metrics-off",
                message: "metrics are not served: start the server with VECSYNC_METRICS_TOKEN (or --metrics-token)")
        }
        try await countingAuthFailures(request, context) {
            guard let given = Self.bearerToken(request), AccessToken.hash(given) == expected else {
                throw APIError.unauthorized("GET /metrics needs 'Authorization: Bearer <the metrics token>'")
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.text())))
    }

    /// The token of the request's `Authorization: Bearer <token>` header, if it has one.
    static func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
    }

    /// The grant of the request's bearer token (401 when there is none), then one request
    /// taken from the token's bucket (429 when it is empty).
    private func grant(of request: Request, _ context: SyncRequestContext) async throws -> TokenGrant {
        guard request.headers[.authorization] != nil else {
            throw APIError.unauthorized("an Authorization: Bearer <token> header is required")
        }
        guard let token = Self.bearerToken(request), token.hasPrefix(AccessToken.prefix) else {
            throw APIError.unauthorized("the Authorization header must be 'Bearer vst_…'")
        }
        let space = context.parameters.get("space") ?? ""
        let hash = AccessToken.hash(token)
        guard let grant = try await store.grant(forTokenHash: hash), grant.spaceName == space else {
            throw APIError.unauthorized("the token is unknown, revoked, or not one of space '\(space)'")
        }
        await knownTokens.insert(hash)
        connections.trust(context.channel)
        let allowed = try await fullDisk.skippingWhenFull("a rate bucket's count", logger: logger) {
            try await store.takeRequest(fromBucket: grant.tokenID, perSecond: limits.requestsPerSecond, burst: limits.burst)
        }
        guard allowed ?? true else {
            throw APIError(
                status: .tooManyRequests, code: "rate-limited",
                message: "more than \(limits.requestsPerSecond) requests a second with this token; retry later",
                headers: [.retryAfter: "1"])
        }
        return grant
    }

    /// Refuses text the stores cannot hold (PostgreSQL's text has no NUL character) as 400,
    /// the same on both back ends, before it reaches a query.
    static func checkText(_ value: String, _ field: String) throws {
        if value.utf8.contains(0) { throw APIError.malformed("\(field) contains a NUL character") }
    }

    /// Refuses a device token acting as another device (403 `wrong-device`).
    func requireDevice(_ site: String, allowedBy grant: TokenGrant, to action: String) throws {
        guard grant.allows(site: site) else {
            throw APIError(
                status: .forbidden, code: "wrong-device",
                message: "this token is bound to device '\(grant.device ?? "")'; it cannot \(action) as '\(site)'")
        }
    }

    /// Refuses a token acting as a registered device that belongs to another live token
    /// (403 `device-owned`, see ``DeviceOwner``). An unregistered device passes: the store
    /// answers for it.
    func requireOwnership(of site: String, by grant: TokenGrant, to action: String, inSpace spaceID: Int64)
        async throws
    {
        guard let owner = try await store.owner(ofDevice: site, inSpace: spaceID), !owner.allows(grant) else { return }
        throw Self.deviceOwned(site, action: action)
    }

    static func deviceOwned(_ site: String, action: String) -> APIError {
        APIError(
            status: .forbidden, code: "device-owned",
            message:
                "device '\(site)' belongs to another token of this space; only that token, or a device token issued for '\(site)' (token issue --device), may \(action) as it"
        )
    }

    /// Runs `handle` with the request's body, read through ``readBody(of:context:space:limit:)``
    /// and held in the server's ``BodyBudget`` (charged as it is read, in `space`'s share)
    /// until `handle` returns.
    func withBody<T>(
        of request: Request, context: SyncRequestContext, space: Int64, limit: Int,
        _ handle: (Data) async throws -> T
    ) async throws -> T {
        let body = await bodyBudget.open(space: space)
        do {
            let result = try await handle(try await readBody(of: request, context: context, body: body, limit: limit))
            await bodyBudget.close(body)
            return result
        } catch {
            await bodyBudget.close(body)
            throw error
        }
    }

    /// The request's body, charged to `body` in the budget a part at a time as it is read,
    /// decompressed when sent with `Content-Encoding: gzip` or `deflate` (another coding is
    /// answered 415). Refused with 413 past `limit` bytes (decompressed too; an announced
    /// length past it before a byte is read); with 503 `busy` when the budget has no room
    /// for a part within ``Limits/bodyWait``; with 408 `too-slow` when it comes slower than
    /// ``Limits/minimumBodyRate`` after ``Limits/bodyGrace`` (time spent waiting for room
    /// not counted) or takes longer than ``Limits/bodyTimeLimit``. A body refused half read
    /// ends its connection (the rest is never read).
    private func readBody(
        of request: Request, context: SyncRequestContext, body: BodyBudget.Body, limit: Int
    ) async throws -> Data {
        if let announced = request.headers[.contentLength].flatMap(Int.init), announced > limit {
            throw APIError(
                status: .contentTooLarge, code: "too-large",
                message: "the body has \(announced) bytes; the limit is \(limit)")
        }
        let coding = request.headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard ["", "identity", "gzip", "x-gzip", "deflate"].contains(coding) else {
            throw APIError(
                status: .unsupportedMediaType, code: "unsupported-encoding",
                message: "Content-Encoding '\(coding)' is not supported: send gzip, deflate or identity")
        }
        var pace = BodyPace(limits: limits)
        var data = Data()
        do {
            for try await part in request.body {
                try await charge(part.readableBytes, to: body, pace: &pace)
                guard data.count + part.readableBytes <= limit else {
                    throw APIError(
                        status: .contentTooLarge, code: "too-large",
                        message: "the body exceeds the limit of \(limit) bytes")
                }
                data.append(contentsOf: part.readableBytesView)
                try pace.check(received: data.count)
            }
        } catch {
            // The rest of the body is not read: the connection ends after the answer.
            context.channel.close(mode: .input, promise: nil)
            if let error = error as? APIError { throw error }
            throw APIError.malformed("the body ended before its announced length, or was not valid HTTP: \(error)")
        }
        guard coding == "gzip" || coding == "x-gzip" || coding == "deflate" else { return data }
        let inflated: Data
        do {
            inflated = try HTTPCompression.inflate(data, limit: limit)
        } catch .tooLarge {
            throw APIError(
                status: .contentTooLarge, code: "too-large",
                message: "the body decompresses to more than the limit of \(limit) bytes")
        } catch {
            throw APIError.malformed("the body is not the gzip or deflate data its Content-Encoding announces")
        }
        try await charge(inflated.count, to: body, pace: &pace)
        return inflated
    }

    /// Charges `bytes` to `body`, waiting for room (the wait is not counted against the pace).
    private func charge(_ bytes: Int, to body: BodyBudget.Body, pace: inout BodyPace) async throws {
        let began = ContinuousClock.now
        let charged = await bodyBudget.take(bytes, for: body, patience: limits.bodyWait)
        pace.waited += ContinuousClock.now - began
        guard charged else {
            throw APIError(
                status: .serviceUnavailable, code: "busy",
                message:
                    "the server holds \(limits.bodyBudgetBytes >> 20) MiB of request bodies already; retry in a few seconds",
                headers: [.retryAfter: "2"])
        }
    }

    // MARK: - Devices

    func registerDevice(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let grant = try await authorize(request, context)
        return try await withBody(of: request, context: context, space: grant.spaceID, limit: 64 << 10) {
            try await register($0, grant: grant)
        }
    }

    private func register(_ data: Data, grant: TokenGrant) async throws -> Response {
        let registration: DeviceRegistration
        do {
            registration = try JSONDecoder().decode(DeviceRegistration.self, from: data)
        } catch {
            throw APIError.malformed("the body must be JSON {\"site\", \"name\", \"platform\"}: \(error)")
        }
        guard (1...200).contains(registration.site.utf8.count), (1...200).contains(registration.name.utf8.count),
            (1...64).contains(registration.platform.utf8.count)
        else {
            throw APIError.malformed("site and name must have 1 to 200 bytes, platform 1 to 64")
        }
        try Self.checkText(registration.site, "site")
        try Self.checkText(registration.name, "name")
        try Self.checkText(registration.platform, "platform")
        try requireDevice(registration.site, allowedBy: grant, to: "register")
        let registered = try await fullDisk.skippingWhenFull("a known device's registration", logger: logger) {
            try await store.registerDevice(registration, inSpace: grant.spaceID, claimedBy: grant, at: Self.now())
        }
        switch registered {
        case .some(let device?):
            return try JSONResponse.make(device)
        case .some(nil):
            throw Self.deviceOwned(registration.site, action: "register")
        case nil:
            // The disk is full: a device this token may act as keeps its record as it is; a
            // new one cannot be stored.
            try await requireOwnership(of: registration.site, by: grant, to: "register", inSpace: grant.spaceID)
            guard let known = try await store.devices(inSpace: grant.spaceID).first(where: { $0.site == registration.site })
            else {
                throw APIError(
                    status: APIError.insufficientStorage, code: "storage-full",
                    message: "the server's storage is full; a new device cannot be registered now; retry later",
                    headers: [.retryAfter: "60"])
            }
            return try JSONResponse.make(known)
        }
    }

    // MARK: - Push

    func pushChangeSet(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let grant = try await authorize(request, context)
        guard let claimed = request.headers[Self.sha256Header]?.lowercased(),
            claimed.count == 64, claimed.allSatisfy(\.isHexDigit)
        else {
            throw APIError.malformed("the X-VecSync-SHA256 header must carry the body's SHA-256 as 64 hex digits")
        }
        return try await withBody(of: request, context: context, space: grant.spaceID, limit: limits.maximumBodyBytes) {
            try await push($0, claimed: claimed, grant: grant)
        }
    }

    /// Stores a pushed change set whose body is `data`, announced with SHA-256 `claimed`.
    private func push(_ data: Data, claimed: String, grant: TokenGrant) async throws -> Response {
        let actual = sha256Hex(data)
        guard actual == claimed else {
            throw APIError(
                status: .badRequest, code: "sha256-mismatch",
                message: "the body's SHA-256 is \(actual), not \(claimed): damaged in transit; nothing stored")
        }
        let changeSet: ChangeSet
        do {
            changeSet = try ChangeSet(serialized: data)
        } catch {
            throw APIError.malformed("not a change set: \(error); nothing stored")
        }
        guard changeSet.since >= 0, changeSet.through > changeSet.since else {
            throw APIError.malformed(
                "a change set must cover a non-empty range, not (\(changeSet.since), \(changeSet.through)]")
        }
        try Self.checkText(changeSet.origin.rawValue, "the change set's origin")
        try requireDevice(changeSet.origin.rawValue, allowedBy: grant, to: "push")
        try await requireOwnership(of: changeSet.origin.rawValue, by: grant, to: "push", inSpace: grant.spaceID)
        var incoming = IncomingChangeSet(
            origin: changeSet.origin.rawValue, since: changeSet.since, through: changeSet.through,
            rows: Int64(changeSet.records.count), sha256: actual, body: data, writes: WriteAttestation(changeSet))
        incoming.quotaBytes = limits.spaceQuotaBytes
        let outcome = try await store.push(incoming, inSpace: grant.spaceID, at: Self.now())
        let (result, status) = try answer(to: outcome, of: incoming, bytes: data.count, grant: grant)
        metrics.push(space: grant.spaceName, result: result.result.rawValue)
        return try JSONResponse.make(result, status: status)
    }

    /// The answer to an accepted push (`stored`: 201; `duplicate`, `covered`, `repaired`: 200);
    /// a refused one throws the error it is answered with.
    private func answer(to outcome: PushOutcome, of incoming: IncomingChangeSet, bytes: Int, grant: TokenGrant) throws
        -> (PushResult, HTTPResponse.Status)
    {
        switch outcome {
        case .stored(let entry):
            return (PushResult(result: .stored, seq: entry.seq, head: entry.through), .created)
        case .duplicate(let entry):
            return (PushResult(result: .duplicate, seq: entry.seq, head: entry.through), .ok)
        case .covered(let head):
            return (PushResult(result: .covered, seq: nil, head: head), .ok)
        case .repaired(let entry):
            logger.notice(
                "change set \(entry.seq) of space \(grant.spaceName) (\(entry.origin) \(entry.since)-\(entry.through)) re-published by its origin: repaired"
            )
            return (PushResult(result: .repaired, seq: entry.seq, head: entry.through), .ok)
        case .gap(let head):
            throw APIError(
                status: .conflict, code: "gap",
                message:
                    "'\(incoming.origin)' has changes through \(head) here; a change set starting after \(incoming.since) would leave a hole; push from \(head) or before",
                head: head)
        case .conflict(let entry):
            throw APIError(
                status: .conflict, code: "range-conflict",
                message:
                    "changes (\(entry.since), \(entry.through)] of '\(entry.origin)' are stored with other bytes (SHA-256 \(entry.sha256))"
            )
        case .overreach(let head):
            throw APIError(
                status: .unprocessableContent, code: "overreach",
                message:
                    "a change set of '\(incoming.origin)' with \(incoming.rows) rows cannot claim (\(incoming.since), \(incoming.through)]: the origin's range (held through \(head)) moves only by the changes a push carries",
                head: head)
        case .forged(let reason):
            logger.warning(
                "push of '\(incoming.origin)' (\(incoming.since)-\(incoming.through)) to space \(grant.spaceName) refused: \(reason)"
            )
            throw APIError(
                status: .unprocessableContent, code: "forged-write",
                message: "a row of this change set is not '\(incoming.origin)''s to push: \(reason); nothing stored")
        case .overQuota(let held, let quota):
            throw APIError(
                status: APIError.insufficientStorage, code: "quota-exceeded",
                message:
                    "space '\(grant.spaceName)' holds \(held) bytes of change sets; \(bytes) more would pass its quota of \(quota) bytes; nothing stored (compact the space, or raise --space-quota-mib)"
            )
        case .unregisteredOrigin:
            throw APIError(
                status: .forbidden, code: "unregistered-device",
                message:
                    "device '\(incoming.origin)' is not registered in space '\(grant.spaceName)': POST …/devices first")
        }
    }

    // MARK: - Pull

    func listChangeSets(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let grant = try await authorize(request, context)
        let query = request.uri.queryParameters
        let after = try Self.integer(
            query.get(ChangeSetPaging.afterParameter), name: ChangeSetPaging.afterParameter,
            default: ChangeSetPaging.firstCursor, range: ChangeSetPaging.cursors)
        let limit = try Self.integer(
            query.get(ChangeSetPaging.limitParameter), name: ChangeSetPaging.limitParameter,
            default: Int64(ChangeSetPaging.defaultLimit), range: 1...Int64(limits.maximumPageSize))
        // The pull point is what the device holds merged, never what it has only listed: a
        // compaction between its listing and its downloads would drop them. Checked whether
        // `site` is there or not, as every parameter is.
        let merged = try Self.integer(
            query.get(ChangeSetPaging.mergedParameter), name: ChangeSetPaging.mergedParameter,
            default: after, range: ChangeSetPaging.cursors)
        if let site = query.get(ChangeSetPaging.siteParameter) {
            try Self.checkText(site, "site")
            try requireDevice(site, allowedBy: grant, to: "record a pull")
            try await requireOwnership(of: site, by: grant, to: "record a pull", inSpace: grant.spaceID)
            _ = try await fullDisk.skippingWhenFull("a pull point", logger: logger) {
                try await store.recordPull(
                    bySite: site, inSpace: grant.spaceID, after: min(merged, after), at: Self.now())
            }
        }
        var entries = try await store.changeSets(inSpace: grant.spaceID, after: after, limit: Int(limit) + 1)
        // Sequence numbers have no holes but those compaction makes: an empty page, or one
        // that does not start right after the cursor, may hide dropped history. (`seq - 1`,
        // not `after + 1`: the cursor may be Int64.max, a seq is at least 1.)
        if entries.first.map({ $0.seq - 1 }) != after,
            let snapshot = try await store.snapshotEntry(inSpace: grant.spaceID),
            after < snapshot.compactedThrough
        {
            throw APIError(
                status: .gone, code: "compacted",
                message:
                    "the change sets through \(snapshot.compactedThrough) were compacted into the snapshot through \(snapshot.seq); bootstrap from GET …/snapshot, then pull after \(snapshot.seq)"
            )
        }
        let hasMore = entries.count > Int(limit)
        if hasMore { entries.removeLast() }
        return try JSONResponse.make(
            ServerChangeSetPage(
                changeSets: entries, nextCursor: entries.last?.seq ?? after, hasMore: hasMore,
                epoch: try await store.epoch()))
    }

    static func integer(_ text: String?, name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64
    {
        guard let text else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw APIError.malformed(
                "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// The sequence number in the path (`{seq}`): 400 unless it is a positive integer.
    static func sequenceNumber(_ context: SyncRequestContext) throws -> Int64 {
        let text = context.parameters.get("seq") ?? ""
        guard let seq = Int64(text), seq > 0 else { throw APIError.malformed("'\(text)' is not a sequence number") }
        return seq
    }

    // MARK: - Status

    /// Readiness: the store answers within 5 s (one cheap read), or 503.
    func ready(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let store = self.store
        do {
            _ = try await Deadline.run(
                within: .seconds(5), failing: ServerStoreError.unavailable("no answer within 5 s")
            ) { try await store.storeID() }
        } catch {
            logger.error("not ready: the store does not answer: \(error)")
            throw APIError(
                status: .serviceUnavailable, code: "not-ready", message: "the store does not answer: \(error)",
                headers: [.retryAfter: "5"])
        }
        return try JSONResponse.make(["status": "ready"])
    }

    func status(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let grant = try await authorize(request, context)
        let devices = try await store.devices(inSpace: grant.spaceID)
        return try JSONResponse.make(
            ServerStatus(
                serverVersion: Self.version, storeID: try await store.storeID(), epoch: try await store.epoch(),
                lastSeq: try await store.lastSequence(inSpace: grant.spaceID), space: grant.spaceName,
                changeSets: devices.reduce(0) { $0 + $1.changeSets }, bytes: devices.reduce(0) { $0 + $1.bytes },
                devices: devices, snapshot: try await store.snapshotEntry(inSpace: grant.spaceID)))
    }
}

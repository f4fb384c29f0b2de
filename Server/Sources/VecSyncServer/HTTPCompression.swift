import CVecSyncZlib
import Foundation
import HTTPTypes

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// gzip where it helps: JSON responses are compressed when the request's `Accept-Encoding`
/// allows it (``ResponseCompression``), and request bodies sent with `Content-Encoding: gzip`
/// (or `deflate`) are decompressed when a route reads them (``SyncServer/body(of:limit:)``).
/// Change sets and snapshots are not compressed: they are mostly float32 embeddings, which
/// gzip shrinks by only about 7 % (measured in `bench/server/README.md`), for CPU on both
/// sides.
///
/// Both happen in the route layer, on whole bodies, over the system's zlib: nothing sits in
/// the connection's channel pipeline, so an answer the HTTP server writes on its own — a 400
/// for a request line it cannot parse, a 401 or 413 sent while the client still uploads —
/// never meets a handler that expects a request for every response (NIO's response
/// compressor trapped on exactly that and took the process down).
enum HTTPCompression {
    /// Whether a `Content-Type` is JSON: the only bodies worth compressing.
    static func isJSON(_ contentType: String?) -> Bool {
        contentType?.lowercased().hasPrefix("application/json") ?? false
    }

    /// Whether an `Accept-Encoding` header admits gzip: `gzip`, `x-gzip` or `*` with a
    /// q-value above 0, and gzip not refused by name (`gzip;q=0`).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var named: Double?
        var wildcard: Double?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                quality = Double(parameter.dropFirst(2)) ?? 0
            }
            switch coding {
            case "gzip", "x-gzip": named = max(named ?? 0, quality)
            case "*": wildcard = quality
            default: break
            }
        }
        return (named ?? wildcard ?? 0) > 0
    }

    /// Why a body could not be coded.
    enum Failure: Error, Equatable {
        /// Not one complete gzip or zlib stream.
        case malformed
        /// It decompresses to more than the limit.
        case tooLarge
        /// zlib failed (out of memory, or otherwise).
        case failed(Int32)
    }

    /// `data` as one gzip member.
    static func gzip(_ data: Data) throws(Failure) -> Data {
        try run(data) { input, count, output, outputCount in vszGzip(input, count, output, outputCount) }
    }

    /// The bytes of a gzip member or zlib stream, at most `limit` of them.
    static func inflate(_ data: Data, limit: Int) throws(Failure) -> Data {
        try run(data) { input, count, output, outputCount in
            vszInflate(input, count, max(0, limit), output, outputCount)
        }
    }

    /// One whole-buffer call of the C shim over `data`, its output copied and freed.
    private static func run(
        _ data: Data,
        _ call: (
            UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>
        ) -> Int32
    ) throws(Failure) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let rc = data.withUnsafeBytes { raw in
            call(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, &output, &count)
        }
        defer { free(output) }
        switch rc {
        case VSZ_OK: return output.map { Data(bytes: $0, count: count) } ?? Data()
        case VSZ_MALFORMED: throw .malformed
        case VSZ_TOO_LARGE: throw .tooLarge
        default: throw .failed(rc)
        }
    }
}

import Foundation
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

/// gzip where it helps: JSON both ways, never the change sets' float blobs.
@Suite("Server compression")
struct CompressionTests {
    @Test func jsonIsGzippedAndChangeSetsAreNot() async throws {
        try await withServedSpace(.sqlite, "gzip") { test, server, space, tokens, _ in
            let device = try PhotoDevice("zipper", photos: 4, prefix: "z", seed: 0x5E4F_000B)
            try await device.sync(through: HTTPTransport(server: server.url, space: space, token: tokens[0]))
            let base = server.url.appendingPathComponent("v1/spaces/\(space)")

            let status = try await raw(
                "GET", base.appendingPathComponent("status"), token: tokens[0], headers: ["Accept-Encoding": "gzip"])
            #expect(status.status == 200 && status.headers["content-encoding"] == "gzip", "\(status.headers)")
            #expect(status.json?["space"] as? String == space, "the client decodes it")
            let plain = try await raw(
                "GET", base.appendingPathComponent("status"), token: tokens[0], headers: ["Accept-Encoding": "identity"]
            )
            #expect(plain.headers["content-encoding"] == nil, "not accepted, not compressed")

            let changeSet = try await raw(
                "GET", base.appendingPathComponent("changesets/1"), token: tokens[0],
                headers: ["Accept-Encoding": "gzip"])
            #expect(changeSet.status == 200 && changeSet.headers["content-encoding"] == nil, "\(changeSet.headers)")
            #expect(sha256Hex(changeSet.body) == changeSet.headers["x-vecsync-sha256"])

            // A gzip request body is read decompressed.
            let registration = try JSONEncoder().encode(["site": "gz", "name": "Gzipped", "platform": "Linux"])
            let registered = try await raw(
                "POST", base.appendingPathComponent("devices"), token: tokens[0],
                headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                body: Gzip.stored(registration))
            #expect(
                registered.status == 200 && registered.json?["name"] as? String == "Gzipped", "\(registered.status)")
        }
    }
}

/// A gzip member (RFC 1952) holding `data` in stored deflate blocks: valid gzip without a
/// compressor, enough to test the server's decompression.
enum Gzip {
    static func stored(_ data: Data) -> Data {
        var out = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])
        let bytes = [UInt8](data)
        var offset = 0
        repeat {
            let count = min(65535, bytes.count - offset)
            let final: UInt8 = offset + count == bytes.count ? 1 : 0
            out.append(final)
            out.append(contentsOf: [
                UInt8(count & 0xff), UInt8(count >> 8), UInt8(~count & 0xff), UInt8((~count >> 8) & 0xff),
            ])
            out.append(contentsOf: bytes[offset..<offset + count])
            offset += count
        } while offset < bytes.count
        for value in [crc32(bytes), UInt32(truncatingIfNeeded: bytes.count)] {
            out.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
        }
        return out
    }

    /// CRC-32 (IEEE, reflected), as gzip's trailer carries it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

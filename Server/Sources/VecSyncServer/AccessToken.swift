import Crypto
import Foundation

/// Device tokens: `vst_` and 64 hex digits of randomness. The server stores only their
/// SHA-256, so a copy of its database opens no space; the token itself is printed once,
/// when it is issued.
public enum AccessToken {
    /// The prefix every token starts with, so a leaked one is easy to recognise.
    public static let prefix = "vst_"

    /// A new token and its record (a random public id, the hash, the label, and the device
    /// it is bound to, if any).
    public static func issue(label: String, device: String? = nil, at time: Int64) -> (
        token: String, record: TokenRecord
    ) {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let id = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token = prefix + hex(secret)
        return (token, TokenRecord(id: hex(id), hash: hash(token), label: label, createdAt: time, device: device))
    }

    /// The hex SHA-256 of a token's UTF-8 bytes: its key in the store.
    public static func hash(_ token: String) -> String {
        hex(SHA256.hash(data: Data(token.utf8)))
    }

    /// Lower-case hex of bytes.
    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

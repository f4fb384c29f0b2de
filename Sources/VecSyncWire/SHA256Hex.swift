import Crypto
import Foundation

/// The hex SHA-256 of bytes (lowercase), as ``Wire/sha256Header`` carries it: computed by
/// the client before a push and after a download, by the server on both too, and stored with
/// each change set.
public func sha256Hex(_ data: Data) -> String {
    SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
}

import Foundation
import VecSyncReplication

/// Why a request to a sync server failed, with what a person needs to act on it.
public enum HTTPTransportError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The server could not be reached, or the connection broke (after the retries).
    case unreachable(url: String, reason: String)
    /// The server answered with an error: its status, its error word (`gap`,
    /// `unauthorized`, `rate-limited`, …) and its message.
    case refused(url: String, status: Int, code: String, message: String)
    /// A downloaded body does not match the SHA-256 the server announced; nothing of it
    /// was merged.
    case integrity(url: String, expected: String, actual: String)
    /// The server's answer is not what the protocol says.
    case protocolViolation(url: String, reason: String)

    /// One sentence.
    public var description: String {
        switch self {
        case .unreachable(let url, let reason):
            "cannot reach \(url): \(reason)"
        case .refused(let url, let status, let code, let message):
            "\(url) answered \(status) \(code): \(message)"
        case .integrity(let url, let expected, let actual):
            "\(url): the body's SHA-256 is \(actual), the server announced \(expected); not merged"
        case .protocolViolation(let url, let reason):
            "\(url): unexpected answer: \(reason)"
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}

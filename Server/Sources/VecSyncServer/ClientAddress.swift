import Foundation
import HTTPTypes
import Hummingbird

/// The address a request comes from, as the per-address limits count it: the connection's
/// peer, or — with ``SyncServer/Limits/trustForwardedFor``, behind a reverse proxy that
/// appends the peer it sees to `X-Forwarded-For` (nginx's `$proxy_add_x_forwarded_for`,
/// Caddy's default) — the last address of that header. Without the flag the header is
/// ignored: a client could write any address there.
enum ClientAddress {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The address of `request`, received through `context`.
    static func of(_ request: Request, _ context: SyncRequestContext, trustForwardedFor: Bool) -> String {
        if trustForwardedFor,
            let last = request.headers[values: forwardedFor].joined(separator: ",").split(separator: ",").last?
                .trimmingCharacters(in: .whitespaces),
            !last.isEmpty
        {
            return last
        }
        return context.remoteAddress?.ipAddress ?? "unknown"
    }
}

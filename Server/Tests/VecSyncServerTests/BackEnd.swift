import Foundation
import Testing

/// The two storage back ends every server test runs on.
enum BackEnd: String, CustomStringConvertible, Sendable {
    case sqlite, postgres

    var description: String { rawValue }

    /// The PostgreSQL database the tests use: `VECSYNC_TEST_POSTGRES_URL`
    /// (`make test-server` starts a throw-away server and sets it).
    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["VECSYNC_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }()

    /// Why the PostgreSQL suites are skipped, when they are.
    static let postgresSkipReason: Comment =
        "VECSYNC_TEST_POSTGRES_URL is not set, so the PostgreSQL back end is skipped; `make test-server` starts a throw-away PostgreSQL and sets it"
}

import PostgresNIO
import Testing
import _ConnectionPoolModule

@testable import VecSyncServer

/// Which store errors are answered 503 `store-unavailable` (retry later) rather than 500:
/// PostgreSQL away in any of the ways PostgresNIO reports it.
@Suite("Store failures")
struct StoreFailureTests {
    @Test(arguments: [
        PSQLError.Code.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
        .poolClosed,
    ])
    func aLostConnectionIsUnavailable(code: PSQLError.Code) {
        #expect(StoreFailure.of(code: code, sqlState: nil) == .unavailable)
    }

    @Test func theServerShuttingDownOrUnreachableIsUnavailable() {
        // admin_shutdown, crash_shutdown, cannot_connect_now, connection_failure
        for state in ["57P01", "57P02", "57P03", "08006", "08001"] {
            #expect(StoreFailure.of(code: .server, sqlState: state) == .unavailable, "\(state)")
        }
        #expect(StoreFailure.of(code: .server, sqlState: "53100") == .full)
        #expect(StoreFailure.of(code: .server, sqlState: "23505") == .other)
        #expect(StoreFailure.of(code: .server, sqlState: nil) == .other)
    }

    @Test func aTimeoutIsUnavailableAndAnythingElseIsOther() {
        #expect(StoreFailure.of(ServerStoreError.unavailable("no answer")) == .unavailable)
        #expect(StoreFailure.of(ServerStoreError.corrupt("x")) == .other)
    }

    /// PostgresNIO's pool, after its connections kept failing for a while (its circuit
    /// breaker), fails every request at once with this error: it was an empty 500.
    @Test func theOpenCircuitBreakerIsUnavailable() {
        #expect(StoreFailure.of(ConnectionPoolError.connectionCreationCircuitBreakerTripped) == .unavailable)
        #expect(StoreFailure.of(ConnectionPoolError.poolShutdown) == .unavailable)
    }
}

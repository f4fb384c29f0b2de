import Testing

/// The server scenarios on the embedded SQLite store.
@Suite("Sync server on SQLite", .serialized)
struct SQLiteServerTests {
    @Test(arguments: ServerScenario.selected)
    func scenario(_ scenario: ServerScenario) async throws { try await scenario.run(.sqlite) }
}

/// The same scenarios on PostgreSQL (`VECSYNC_TEST_POSTGRES_URL`).
@Suite("Sync server on PostgreSQL", .serialized, .enabled(if: BackEnd.postgresURL != nil, BackEnd.postgresSkipReason))
struct PostgresServerTests {
    @Test(arguments: ServerScenario.selected)
    func scenario(_ scenario: ServerScenario) async throws { try await scenario.run(.postgres) }
}

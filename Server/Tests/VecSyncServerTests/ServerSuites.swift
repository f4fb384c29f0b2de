import Testing

/// The server scenarios on the embedded SQLite store.
@Suite("Sync server on SQLite", .serialized)
struct SQLiteServerTests {
    @Test func threeReplicasConverge() async throws { try await ServerScenarios.threeReplicasConverge(.sqlite) }
    @Test func spacesAreIsolated() async throws { try await ServerScenarios.spacesAreIsolated(.sqlite) }
    @Test func twoInstancesServeOneDatabase() async throws {
        try await ServerScenarios.twoInstancesServeOneDatabase(.sqlite)
    }
    @Test func pushProtocol() async throws { try await ServerScenarios.pushProtocol(.sqlite) }
    @Test func tamperedDownloadIsRefused() async throws { try await ServerScenarios.tamperedDownloadIsRefused(.sqlite) }
    @Test func damagedChangeSetIsRepublishedByItsOrigin() async throws {
        try await ServerScenarios.damagedChangeSetIsRepublishedByItsOrigin(.sqlite)
    }
    @Test func restoredDeviceGetsItsLostFutureBack() async throws {
        try await ServerScenarios.restoredDeviceGetsItsLostFutureBack(.sqlite)
    }
    @Test func serverStoppedMidTransferLosesNothing() async throws {
        try await ServerScenarios.serverStoppedMidTransferLosesNothing(.sqlite)
    }
    @Test func limitsAreEnforced() async throws { try await ServerScenarios.limitsAreEnforced(.sqlite) }
    @Test func storeAppliesThePushRule() async throws { try await ServerScenarios.storeAppliesThePushRule(.sqlite) }
    @Test func rateLimitAcrossInstances() async throws { try await ServerScenarios.rateLimitAcrossInstances(.sqlite) }
    @Test func newDeviceBootstrapsFromSnapshot() async throws {
        try await ServerScenarios.newDeviceBootstrapsFromSnapshot(.sqlite)
    }
    @Test func deviceBehindCompactionRecovers() async throws {
        try await ServerScenarios.deviceBehindCompactionRecovers(.sqlite)
    }
    @Test func deviceTokensActAsTheirDeviceOnly() async throws {
        try await ServerScenarios.deviceTokensActAsTheirDeviceOnly(.sqlite)
    }
    @Test func pagesAreStableUnderConcurrentPushes() async throws {
        try await ServerScenarios.pagesAreStableUnderConcurrentPushes(.sqlite)
    }
    @Test func malformedRequestsAreRefusedAndServingGoesOn() async throws {
        try await ServerScenarios.malformedRequestsAreRefusedAndServingGoesOn(.sqlite)
    }
    @Test func noTokenCanBlackHoleAnotherDevice() async throws {
        try await ServerScenarios.noTokenCanBlackHoleAnotherDevice(.sqlite)
    }
    @Test func forgedAuthorshipIsRefused() async throws {
        try await ServerScenarios.forgedAuthorshipIsRefused(.sqlite)
    }
    @Test func integerKeysFromEveryDevice() async throws {
        try await ServerScenarios.integerKeysFromEveryDevice(.sqlite)
    }
    @Test func restoredStoreLosesNoRows() async throws {
        try await ServerScenarios.restoredStoreLosesNoRows(.sqlite)
    }
    @Test func stalledClientsAreDropped() async throws {
        try await ServerScenarios.stalledClientsAreDropped(.sqlite)
    }
    @Test func invalidNamesAreRefused() async throws {
        try await ServerScenarios.invalidNamesAreRefused(.sqlite)
    }
    @Test func connectionsPastTheCapAreClosed() async throws {
        try await ServerScenarios.connectionsPastTheCapAreClosed(.sqlite)
    }
    @Test func schemaFindingsAreAnswered() async throws {
        try await ServerScenarios.schemaFindingsAreAnswered(.sqlite)
    }
    @Test func authFailuresAreLimitedPerAddress() async throws {
        try await ServerScenarios.authFailuresAreLimitedPerAddress(.sqlite)
    }
    @Test func bodiesWaitForTheBodyBudget() async throws {
        try await ServerScenarios.bodiesWaitForTheBodyBudget(.sqlite)
    }
    @Test func metricsAndAccessLog() async throws {
        try await ServerScenarios.metricsAndAccessLog(.sqlite)
    }
    @Test func spaceQuotaIsKept() async throws {
        try await ServerScenarios.spaceQuotaIsKept(.sqlite)
    }
    @Test func rangesAreReadAlone() async throws {
        try await ServerScenarios.rangesAreReadAlone(.sqlite)
    }
}

/// The same scenarios on PostgreSQL (`VECSYNC_TEST_POSTGRES_URL`).
@Suite("Sync server on PostgreSQL", .serialized, .enabled(if: BackEnd.postgresURL != nil, BackEnd.postgresSkipReason))
struct PostgresServerTests {
    @Test func threeReplicasConverge() async throws { try await ServerScenarios.threeReplicasConverge(.postgres) }
    @Test func spacesAreIsolated() async throws { try await ServerScenarios.spacesAreIsolated(.postgres) }
    @Test func twoInstancesServeOneDatabase() async throws {
        try await ServerScenarios.twoInstancesServeOneDatabase(.postgres)
    }
    @Test func pushProtocol() async throws { try await ServerScenarios.pushProtocol(.postgres) }
    @Test func tamperedDownloadIsRefused() async throws {
        try await ServerScenarios.tamperedDownloadIsRefused(.postgres)
    }
    @Test func damagedChangeSetIsRepublishedByItsOrigin() async throws {
        try await ServerScenarios.damagedChangeSetIsRepublishedByItsOrigin(.postgres)
    }
    @Test func restoredDeviceGetsItsLostFutureBack() async throws {
        try await ServerScenarios.restoredDeviceGetsItsLostFutureBack(.postgres)
    }
    @Test func serverStoppedMidTransferLosesNothing() async throws {
        try await ServerScenarios.serverStoppedMidTransferLosesNothing(.postgres)
    }
    @Test func limitsAreEnforced() async throws { try await ServerScenarios.limitsAreEnforced(.postgres) }
    @Test func storeAppliesThePushRule() async throws { try await ServerScenarios.storeAppliesThePushRule(.postgres) }
    @Test func rateLimitAcrossInstances() async throws { try await ServerScenarios.rateLimitAcrossInstances(.postgres) }
    @Test func newDeviceBootstrapsFromSnapshot() async throws {
        try await ServerScenarios.newDeviceBootstrapsFromSnapshot(.postgres)
    }
    @Test func deviceBehindCompactionRecovers() async throws {
        try await ServerScenarios.deviceBehindCompactionRecovers(.postgres)
    }
    @Test func deviceTokensActAsTheirDeviceOnly() async throws {
        try await ServerScenarios.deviceTokensActAsTheirDeviceOnly(.postgres)
    }
    @Test func pagesAreStableUnderConcurrentPushes() async throws {
        try await ServerScenarios.pagesAreStableUnderConcurrentPushes(.postgres)
    }
    @Test func malformedRequestsAreRefusedAndServingGoesOn() async throws {
        try await ServerScenarios.malformedRequestsAreRefusedAndServingGoesOn(.postgres)
    }
    @Test func noTokenCanBlackHoleAnotherDevice() async throws {
        try await ServerScenarios.noTokenCanBlackHoleAnotherDevice(.postgres)
    }
    @Test func forgedAuthorshipIsRefused() async throws {
        try await ServerScenarios.forgedAuthorshipIsRefused(.postgres)
    }
    @Test func integerKeysFromEveryDevice() async throws {
        try await ServerScenarios.integerKeysFromEveryDevice(.postgres)
    }
    @Test func restoredStoreLosesNoRows() async throws {
        try await ServerScenarios.restoredStoreLosesNoRows(.postgres)
    }
    @Test func stalledClientsAreDropped() async throws {
        try await ServerScenarios.stalledClientsAreDropped(.postgres)
    }
    @Test func invalidNamesAreRefused() async throws {
        try await ServerScenarios.invalidNamesAreRefused(.postgres)
    }
    @Test func connectionsPastTheCapAreClosed() async throws {
        try await ServerScenarios.connectionsPastTheCapAreClosed(.postgres)
    }
    @Test func schemaFindingsAreAnswered() async throws {
        try await ServerScenarios.schemaFindingsAreAnswered(.postgres)
    }
    @Test func authFailuresAreLimitedPerAddress() async throws {
        try await ServerScenarios.authFailuresAreLimitedPerAddress(.postgres)
    }
    @Test func bodiesWaitForTheBodyBudget() async throws {
        try await ServerScenarios.bodiesWaitForTheBodyBudget(.postgres)
    }
    @Test func metricsAndAccessLog() async throws {
        try await ServerScenarios.metricsAndAccessLog(.postgres)
    }
    @Test func spaceQuotaIsKept() async throws {
        try await ServerScenarios.spaceQuotaIsKept(.postgres)
    }
    @Test func rangesAreReadAlone() async throws {
        try await ServerScenarios.rangesAreReadAlone(.postgres)
    }
}

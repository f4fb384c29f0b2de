import Foundation
import Testing

/// A scenario of ``ServerScenarios`` by name, as the back ends' suites run it: each is a
/// case of their one parameterised test, reported by this name.
struct ServerScenario: Sendable, CustomTestStringConvertible {
    let name: String
    let run: @Sendable (BackEnd) async throws -> Void

    init(_ name: String, _ run: @escaping @Sendable (BackEnd) async throws -> Void) {
        self.name = name
        self.run = run
    }

    var testDescription: String { name }

    /// Every scenario, in the order the suites run them.
    static let all: [ServerScenario] = [
        ServerScenario("threeReplicasConverge", ServerScenarios.threeReplicasConverge),
        ServerScenario("spacesAreIsolated", ServerScenarios.spacesAreIsolated),
        ServerScenario("twoInstancesServeOneDatabase", ServerScenarios.twoInstancesServeOneDatabase),
        ServerScenario("pushProtocol", ServerScenarios.pushProtocol),
        ServerScenario("tamperedDownloadIsRefused", ServerScenarios.tamperedDownloadIsRefused),
        ServerScenario("damagedChangeSetIsRepublishedByItsOrigin", ServerScenarios.damagedChangeSetIsRepublishedByItsOrigin),
        ServerScenario("restoredDeviceGetsItsLostFutureBack", ServerScenarios.restoredDeviceGetsItsLostFutureBack),
        ServerScenario("serverStoppedMidTransferLosesNothing", ServerScenarios.serverStoppedMidTransferLosesNothing),
        ServerScenario("limitsAreEnforced", ServerScenarios.limitsAreEnforced),
        ServerScenario("storeAppliesThePushRule", ServerScenarios.storeAppliesThePushRule),
        ServerScenario("rateLimitAcrossInstances", ServerScenarios.rateLimitAcrossInstances),
        ServerScenario("newDeviceBootstrapsFromSnapshot", ServerScenarios.newDeviceBootstrapsFromSnapshot),
        ServerScenario("deviceBehindCompactionRecovers", ServerScenarios.deviceBehindCompactionRecovers),
        ServerScenario("compactionDuringAPullLosesNothing", ServerScenarios.compactionDuringAPullLosesNothing),
        ServerScenario("deviceTokensActAsTheirDeviceOnly", ServerScenarios.deviceTokensActAsTheirDeviceOnly),
        ServerScenario("pagesAreStableUnderConcurrentPushes", ServerScenarios.pagesAreStableUnderConcurrentPushes),
        ServerScenario("malformedRequestsAreRefusedAndServingGoesOn", ServerScenarios.malformedRequestsAreRefusedAndServingGoesOn),
        ServerScenario("noTokenCanBlackHoleAnotherDevice", ServerScenarios.noTokenCanBlackHoleAnotherDevice),
        ServerScenario("forgedAuthorshipIsRefused", ServerScenarios.forgedAuthorshipIsRefused),
        ServerScenario("integerKeysFromEveryDevice", ServerScenarios.integerKeysFromEveryDevice),
        ServerScenario("restoredStoreLosesNoRows", ServerScenarios.restoredStoreLosesNoRows),
        ServerScenario("rawCopyRestoreLosesNoRows", ServerScenarios.rawCopyRestoreLosesNoRows),
        ServerScenario("stalledClientsAreDropped", ServerScenarios.stalledClientsAreDropped),
        ServerScenario("shutdownHasADeadline", ServerScenarios.shutdownHasADeadline),
        ServerScenario("slowUploadsHoldNothing", ServerScenarios.slowUploadsHoldNothing),
        ServerScenario("invalidNamesAreRefused", ServerScenarios.invalidNamesAreRefused),
        ServerScenario("connectionsPastTheCapAreClosed", ServerScenarios.connectionsPastTheCapAreClosed),
        ServerScenario("idleConnectionsGiveWayToDevices", ServerScenarios.idleConnectionsGiveWayToDevices),
        ServerScenario("schemaFindingsAreAnswered", ServerScenarios.schemaFindingsAreAnswered),
        ServerScenario("authFailuresAreLimitedPerAddress", ServerScenarios.authFailuresAreLimitedPerAddress),
        ServerScenario("heldAnswersWaitOnlyWhilePlacesAreFree", ServerScenarios.heldAnswersWaitOnlyWhilePlacesAreFree),
        ServerScenario("bodiesWaitForTheBodyBudget", ServerScenarios.bodiesWaitForTheBodyBudget),
        ServerScenario("metricsAndAccessLog", ServerScenarios.metricsAndAccessLog),
        ServerScenario("spaceQuotaIsKept", ServerScenarios.spaceQuotaIsKept),
        ServerScenario("rangesAreReadAlone", ServerScenarios.rangesAreReadAlone),
        ServerScenario("downloadsPerTokenAreCapped", ServerScenarios.downloadsPerTokenAreCapped),
    ]

    /// The scenarios to run: those `VECSYNC_SERVER_SCENARIO` names (comma-separated) when it
    /// is set, else all. `swift test --filter` selects tests, not their cases: this selects
    /// scenarios, on both back ends.
    static var selected: [ServerScenario] {
        let wanted = (ProcessInfo.processInfo.environment["VECSYNC_SERVER_SCENARIO"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return wanted.isEmpty ? all : all.filter { wanted.contains($0.name) }
    }
}

import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncStores
import VecSyncTestSupport

@testable import VecSyncReplication

/// Choir on two devices, "mac" and "phone": a `MessageStore` on each, their replicas tracking
/// the Choir tables as the app ships them (parameter_history with its INTEGER PRIMARY KEY
/// AUTOINCREMENT, the thread's k0, alpha and m declared counters), a thread `t1` made on the
/// Mac with `messages` messages `m0`, `m1`, …, and both in step.
struct ChoirPair {
    let stores: [MessageStore]
    let replicas: [Replica]

    init(messages: Int, k0: Double = 1.0) throws {
        let clock = SteppingClock()
        let queues = try [StoreSchemaSyncTests.database(), StoreSchemaSyncTests.database()]
        stores = try queues.map { try MessageStore(writer: $0, dimensions: 4, clock: { clock.now() }) }
        replicas = try zip(["mac", "phone"], queues).map { try Replica($0.1, site: SiteID($0.0)) }
        for replica in replicas {
            for table in StoreSchemaSyncTests.messageTables { try replica.track(table) }
        }
        try stores[0].createThread(id: "t1", title: "choir", k0: k0, alpha: 0.5, m: 1.0)
        for index in 0..<messages {
            try stores[0].addMessage(
                id: "m\(index)", threadId: "t1", userId: "u1", content: "message \(index)",
                embedding: Vector([Float(index), 1, 0, 0]), phase: .action)
        }
        try exchange()
    }

    /// Merges what each device has into the other, both ways, twice, through the binary form;
    /// nothing may wait in quarantine.
    func exchange() throws {
        for _ in 0..<2 {
            let toPhone = try replicas[1].merge(ChangeSet(serialized: replicas[0].changes(since: 0).serialized()))
            let toMac = try replicas[0].merge(ChangeSet(serialized: replicas[1].changes(since: 0).serialized()))
            #expect(toPhone.quarantined.isEmpty && toMac.quarantined.isEmpty, "\(toPhone) / \(toMac)")
        }
    }
}

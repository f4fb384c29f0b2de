import Foundation
import VecSyncServer

/// A space name no other run (or earlier run on the same PostgreSQL) uses: `label` and eight
/// random hex digits.
public func uniqueSpace(_ label: String) -> String {
    "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
}

/// Creates a new space (``uniqueSpace(_:)``) in `store` with `count` tokens, labelled
/// "device 0", "device 1", …, all at `time`; returns its name and the tokens.
public func makeSpace(_ store: any ServerStore, _ label: String, tokens count: Int = 1, at time: Int64 = 1)
    async throws -> (space: String, tokens: [String])
{
    let space = uniqueSpace(label)
    _ = try await store.createSpace(named: space, at: time)
    var tokens: [String] = []
    for index in 0..<count {
        let (token, record) = AccessToken.issue(label: "device \(index)", at: time)
        try await store.addToken(record, toSpaceNamed: space)
        tokens.append(token)
    }
    return (space, tokens)
}

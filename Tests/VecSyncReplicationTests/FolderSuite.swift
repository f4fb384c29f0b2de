import Foundation

@testable import VecSyncReplication

/// A suite whose tests each sync through a shared folder of their own: the suite holds a
/// ``ScratchFolder`` (`let scratch = ScratchFolder("label")`), new for every test.
protocol FolderSuite: ReplicationSuite {
    /// This test's folder.
    var scratch: ScratchFolder { get }
}

extension FolderSuite {
    /// The shared folder.
    var folder: URL { scratch.url }

    /// A transport through the shared folder.
    var transport: FolderTransport { FolderTransport(scratch.url) }
}

// swift-tools-version:6.1
//
// VecSync: exact vector search inside SQLite, and sync that never loses an embedding.
//
// Two faces, two builds of one set of C sources (CSources/vecsync):
// - the loadable extension `libvecsync.so` / `.dylib` (product `vecsync`, target
//   CVecSyncLoadable), for the sqlite3 shell, Python, or any SQLite host:
//   `.load .build/libvecsync`. It reaches SQLite through the routine table SQLite hands it;
// - the Swift host (`import VecSync`, target CVecSync), compiled with SQLITE_CORE so that it
//   calls the SQLite the app links, whichever it is (Apple's, Debian's, SQLCipher, a custom
//   build), and installed on each connection GRDB opens. Apple's SQLite makes
//   `sqlite3_auto_extension` a no-op and cannot load extensions: per connection is the one
//   way that works everywhere.
//
// The sync server (`vecsync-server`) is a package of its own, `Server/`, which depends on
// this one by path: an app that adds VecSync resolves GRDB, argument-parser and
// swift-crypto, never the server's HTTP and PostgreSQL stack.
import PackageDescription

// What both builds of the C share: the Apple define, and the BLAS they link.
let cSettings: [CSetting] = [
    .headerSearchPath("."),
    .define("VECSYNC_ACCELERATE", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
]
let linkerSettings: [LinkerSetting] = [
    // Debian merged the CBLAS interface into libblas.so (libblas-dev); there is no separate
    // libcblas.so to link.
    .linkedLibrary("blas", .when(platforms: [.linux])),
    .linkedLibrary("m", .when(platforms: [.linux])),
    .linkedFramework("Accelerate", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
]

let package = Package(
    name: "VecSync",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "vecsync", type: .dynamic, targets: ["CVecSyncLoadable"]),
        .library(name: "VecSync", targets: ["VecSync"]),
        // Sync through a vecsync-server (HTTPTransport): a product of its own, so that only
        // an app that syncs through a server gains an HTTP client (AsyncHTTPClient on Linux;
        // URLSession on Apple platforms).
        .library(name: "VecSyncHTTP", targets: ["VecSyncHTTP"]),
        // The sync server's HTTP bodies, SHA-256 helper and paging rules, for the server
        // package (`Server/`); apps reach the few types they need through `VecSync`.
        .library(name: "VecSyncWire", targets: ["VecSyncWire"]),
        .executable(name: "vecsync-cli", targets: ["vecsync-cli"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // SHA-256 of change set bodies, on both sides of the wire (CryptoKit on Apple
        // platforms, the same API over BoringSSL on Linux).
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // The HTTP transport's client on Linux (Apple platforms use URLSession): deadlines,
        // size caps and no busy wait, where FoundationNetworking's URLSession spins.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Documentation only: `swift package generate-documentation --target VecSync`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The C sources as the Swift host compiles them: SQLITE_CORE, so every sqlite3_*
        // call goes to the SQLite library the app links (through GRDB, which links it; no
        // target of ours names GRDB's SQLite target, which GRDB's SQLCipher setup removes).
        .target(
            name: "CVecSync",
            path: "CSources/vecsync",
            cSettings: cSettings + [.define("SQLITE_CORE")],
            linkerSettings: linkerSettings
        ),
        // The same sources as the loadable extension (product `vecsync`): each file of
        // CSources/vecsync-loadable includes its namesake in CSources/vecsync, since SwiftPM
        // compiles a file for one target only. No SQLITE_CORE: SQLite hands the entry point
        // its routine table, and no libsqlite3 is linked.
        .target(
            name: "CVecSyncLoadable",
            path: "CSources/vecsync-loadable",
            cSettings: cSettings,
            linkerSettings: linkerSettings
        ),
        .target(
            name: "VecSyncCore",
            dependencies: [
                "CVecSync",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(name: "VecSyncStores", dependencies: ["VecSyncCore"]),
        // One home for what the HTTP client and the server must spell the same.
        .target(name: "VecSyncWire", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "VecSyncReplication", dependencies: ["VecSyncCore"]),
        // The only target that depends on an HTTP client.
        .target(
            name: "VecSyncHTTP",
            dependencies: [
                "VecSyncReplication", "VecSyncWire",
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
            ]),
        .target(name: "VecSync", dependencies: ["VecSyncCore", "VecSyncStores", "VecSyncReplication"]),
        .executableTarget(
            name: "vecsync-cli",
            dependencies: [
                "VecSync", "VecSyncHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What every test target shares: the seeded generator, the stepping clock,
        // temporary directories.
        .target(name: "VecSyncTestSupport", dependencies: ["VecSyncCore"], path: "Tests/VecSyncTestSupport"),
        .testTarget(name: "VecSyncCoreTests", dependencies: ["VecSyncCore", "VecSyncTestSupport"]),
        .testTarget(name: "VecSyncStoresTests", dependencies: ["VecSyncStores", "VecSyncTestSupport"]),
        .testTarget(
            name: "VecSyncReplicationTests",
            dependencies: ["VecSyncReplication", "VecSyncHTTP", "VecSyncStores", "VecSyncTestSupport"]
        ),
        // The Swift examples of README.md and docs/*.md, each a `// snippet:` region that
        // scripts/check-docs.py matches to its page: compiled, and run where they can be.
        .testTarget(name: "DocExamplesTests", dependencies: ["VecSync", "VecSyncHTTP", "VecSyncTestSupport"]),
        .testTarget(
            name: "VecSyncCLITests",
            dependencies: [
                "vecsync-cli",
                "VecSyncStores",
                "VecSyncTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)

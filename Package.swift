// swift-tools-version:6.1
//
// VecSync: exact vector search inside SQLite, and sync that never loses an embedding.
//
// Two faces, one compiled C target:
// - the loadable extension `libvecsync.so` (product `vecsync`), for the sqlite3 shell,
//   Python, or any SQLite host: `.load .build/libvecsync`;
// - the Swift host (`import VecSync`), which registers the same C code on every GRDB
//   connection through `sqlite3_auto_extension`.
//
// The sync server (`vecsync-server`) is a package of its own, `Server/`, which depends on
// this one by path: an app that adds VecSync resolves GRDB, argument-parser and
// swift-crypto, never the server's HTTP and PostgreSQL stack.
import PackageDescription

let package = Package(
    name: "VecSync",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "vecsync", type: .dynamic, targets: ["CVecSync"]),
        .library(name: "VecSync", targets: ["VecSync"]),
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
        // Documentation only: `swift package generate-documentation --target VecSync`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The SQLite extension. It includes sqlite3ext.h and reaches SQLite only through the
        // routines table handed to its entry point, so it links no libsqlite3 of its own.
        .target(
            name: "CVecSync",
            path: "CSources/vecsync",
            cSettings: [
                .headerSearchPath("."),
                .define("VECSYNC_ACCELERATE", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
            ],
            linkerSettings: [
                // Debian merged the CBLAS interface into libblas.so (libblas-dev); there is
                // no separate libcblas.so to link.
                .linkedLibrary("blas", .when(platforms: [.linux])),
                .linkedLibrary("m", .when(platforms: [.linux])),
                .linkedFramework("Accelerate", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
            ]
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
        .target(name: "VecSyncReplication", dependencies: ["VecSyncCore", "VecSyncWire"]),
        .target(name: "VecSync", dependencies: ["VecSyncCore", "VecSyncStores", "VecSyncReplication"]),
        .executableTarget(
            name: "vecsync-cli",
            dependencies: [
                "VecSync",
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
            dependencies: ["VecSyncReplication", "VecSyncStores", "VecSyncTestSupport"]
        ),
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

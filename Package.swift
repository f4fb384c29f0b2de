// swift-tools-version:6.1
//
// VecSync: exact vector search inside SQLite, and sync that never loses an embedding.
//
// Two faces, one compiled C target:
// - the loadable extension `libvecsync.so` (product `vecsync`), for the sqlite3 shell,
//   Python, or any SQLite host: `.load .build/libvecsync`;
// - the Swift host (`import VecSync`), which registers the same C code on every GRDB
//   connection through `sqlite3_auto_extension`.
import PackageDescription

let package = Package(
    name: "VecSync",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "vecsync", type: .dynamic, targets: ["CVecSync"]),
        .library(name: "VecSync", targets: ["VecSync"]),
        .executable(name: "vecsync-cli", targets: ["vecsync-cli"]),
        .executable(name: "vecsync-server", targets: ["vecsync-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // SHA-256 of change set bodies, on both sides of the wire (CryptoKit on Apple
        // platforms, the same API over BoringSSL on Linux).
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // The sync server: its HTTP tier and its PostgreSQL back end.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // ByteBuffer for the server's bodies (already in the graph through Hummingbird).
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        // Graceful shutdown of the server (already in the graph through Hummingbird).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
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
        .target(
            name: "VecSyncReplication",
            dependencies: ["VecSyncCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "VecSync", dependencies: ["VecSyncCore", "VecSyncStores", "VecSyncReplication"]),
        .executableTarget(
            name: "vecsync-cli",
            dependencies: [
                "VecSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // gzip for the server's JSON bodies, over the system's zlib (zlib1g-dev on Debian).
        .target(
            name: "CVecSyncZlib",
            path: "Sources/CVecSyncZlib",
            linkerSettings: [.linkedLibrary("z")]
        ),
        // The relay: stores change sets per space without knowing the app schema, on SQLite
        // (GRDB) or PostgreSQL, behind an authenticated HTTP API.
        .target(
            name: "VecSyncServer",
            dependencies: [
                "VecSyncReplication",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "CVecSyncZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "vecsync-server",
            dependencies: [
                "VecSyncServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The server's load test (bench/server/README.md); it uses only the package's own
        // dependencies.
        .executableTarget(
            name: "vecsync-server-bench",
            dependencies: [
                "VecSyncServer",
                "VecSyncReplication",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "bench/server/Sources"
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
            name: "VecSyncServerTests",
            dependencies: [
                "VecSyncServer", "VecSyncReplication", "VecSyncStores", "VecSyncTestSupport", "vecsync-cli",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
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

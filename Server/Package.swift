// swift-tools-version:6.1
//
// vecsync-server: the sync server that relays change sets between the devices of a space,
// on SQLite (GRDB) or PostgreSQL, behind an authenticated HTTP API.
//
// A package of its own so that apps depending on VecSync never resolve Hummingbird,
// PostgresNIO or SwiftNIO: it depends on the repository's root package by path.
//
//     swift build --package-path Server -c release --product vecsync-server
import PackageDescription

let package = Package(
    name: "VecSyncServer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "vecsync-server", targets: ["vecsync-server"]),
        .library(name: "VecSyncServer", targets: ["VecSyncServer"]),
    ],
    dependencies: [
        .package(name: "VecSync", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // The HTTP tier and the PostgreSQL back end.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // ByteBuffer for the server's bodies (already in the graph through Hummingbird).
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Graceful shutdown (already in the graph through Hummingbird).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Metrics (`GET /metrics`): recorded through swift-metrics, exposed by swift-prometheus.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // gzip for the server's JSON bodies, over the system's zlib (zlib1g-dev on Debian).
        .target(name: "CVecSyncZlib", linkerSettings: [.linkedLibrary("z")]),
        .target(
            name: "VecSyncServer",
            dependencies: [
                .product(name: "VecSync", package: "VecSync"),
                // The API's bodies, SHA-256 and paging rules, shared with the HTTP client.
                .product(name: "VecSyncWire", package: "VecSync"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // sqlite3_blob_read: a byte range of a stored change set, read alone.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "CVecSyncZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "vecsync-server",
            dependencies: [
                "VecSyncServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The server's load test (bench/server/README.md).
        .executableTarget(
            name: "vecsync-server-bench",
            dependencies: [
                "VecSyncServer", "ServerFixtures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What the load test and the tests both use to drive a server: a space with tokens,
        // a TCP connection on loopback.
        .target(name: "ServerFixtures", dependencies: ["VecSyncServer"]),
        // The root package's test support (seeded generator, stepping clock, temporary
        // directories), compiled here from the same files under another module name.
        .target(
            name: "ServerTestSupport",
            dependencies: [.product(name: "VecSync", package: "VecSync")],
            path: "Tests/VecSyncTestSupport"
        ),
        .testTarget(
            name: "VecSyncServerTests",
            dependencies: [
                "VecSyncServer", "ServerTestSupport", "ServerFixtures",
                .product(name: "VecSync", package: "VecSync"),
                .product(name: "VecSyncHTTP", package: "VecSync"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)

// swift-tools-version:6.1
//
// PhotoSearch: the smallest app that uses VecSync as an app does, depending on it by path.
// `make test` builds and runs it twice: as is, and under the Apple-SQLite lane (no
// sqlite3_auto_extension, no extension loading), as on an iPhone or a Mac.
import PackageDescription

let package = Package(
    name: "PhotoSearch",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "VecSync", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "PhotoSearch",
            dependencies: [.product(name: "VecSync", package: "VecSync")]
        ),
    ]
)

// swift-tools-version:6.0
import PackageDescription

// A user's package whose test target depends on the StrataTestSupport product (fault injection)
// and an embedded engine, not on PostgreSQL. It must build and run without the PostgreSQL client
// library (libpq-dev): `Scripts/check-test-support-without-libpq.sh` builds it with libpq's
// headers and libraries hidden, and CI runs that script.
let package = Package(
    name: "TestSupportUser",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Strata", path: "../../..")],
    targets: [
        .target(
            name: "Shelf",
            dependencies: [.product(name: "Strata", package: "Strata")],
            path: "Sources/Shelf"
        ),
        .testTarget(
            name: "ShelfTests",
            dependencies: [
                "Shelf",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataSQLite", package: "Strata"),
                .product(name: "StrataTestSupport", package: "Strata"),
            ],
            path: "Tests/ShelfTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)

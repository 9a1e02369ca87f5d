// swift-tools-version:6.2
import PackageDescription

// An engine built outside Strata's package: a package of its own that depends on Strata by path
// and implements `StorageEngine` with Strata's public API only, then runs the whole conformance
// kit on it in one line. The engine is the in-memory engine's source (`Sources/OutsideMemoryEngine`
// is a link to `Modules/StrataMemory`), compiled here as a module of this package, where no
// `package` declaration of Strata is visible, as for any engine written elsewhere.
// CI builds and runs it (`bash Scripts/check-outside-engine.sh`).
let package = Package(
    name: "OutsideEngine",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Strata", path: "../../..")],
    targets: [
        .target(
            name: "OutsideMemoryEngine",
            dependencies: [.product(name: "StrataStorage", package: "Strata")],
            path: "Sources/OutsideMemoryEngine",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .strictMemorySafety(),
            ]
        ),
        .executableTarget(
            name: "outside-kit",
            dependencies: [
                "OutsideMemoryEngine",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataConformance", package: "Strata"),
            ],
            path: "Sources/outside-kit",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

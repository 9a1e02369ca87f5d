// swift-tools-version:6.2
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode (complete strict concurrency) plus the
/// upcoming features that keep imports and existentials explicit.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Modules whose unsafe code is walled into a few listed files (`Docs/Architecture.md`,
/// "Unsafe code"): the compiler flags every unsafe construct not acknowledged there.
let strictMemorySafety: [SwiftSetting] = [.strictMemorySafety()]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "StrataSQLite", targets: ["StrataSQLite"]),
        .library(name: "StrataLMDB", targets: ["StrataLMDB"]),
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
        .library(name: "StrataMemory", targets: ["StrataMemory"]),
        .library(name: "StrataConformance", targets: ["StrataConformance"]),
        .library(name: "StrataTestSupport", targets: ["StrataTestSupport"]),
        .library(name: "Ledger", targets: ["Ledger"]),
        .executable(name: "ledger", targets: ["ledger"]),
        .executable(name: "responsiveness", targets: ["responsiveness"]),
        .executable(name: "strata-bench", targets: ["strata-bench"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Modules/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLMDB",
            path: "Modules/CLMDB",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .systemLibrary(
            name: "CPostgres",
            path: "Modules/CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(name: "CStrataCRC", path: "Modules/CStrataCRC"),
        .target(name: "StrataStorage", path: "Modules/StrataStorage", swiftSettings: strictMemorySafety),
        .target(
            name: "Strata", dependencies: ["StrataStorage"], path: "Modules/Strata", swiftSettings: strictMemorySafety),
        .target(
            name: "StrataSQLite", dependencies: ["StrataStorage", "CSQLite"], path: "Modules/StrataSQLite",
            swiftSettings: strictMemorySafety
        ),
        .target(
            name: "StrataLMDB", dependencies: ["StrataStorage", "CLMDB", "CStrataCRC"], path: "Modules/StrataLMDB",
            swiftSettings: strictMemorySafety
        ),
        .target(
            name: "StrataPostgres", dependencies: ["StrataStorage", "CPostgres"], path: "Modules/StrataPostgres",
            swiftSettings: strictMemorySafety
        ),
        // Public API only (packageAccess: false): an engine any outside package could write.
        .target(
            name: "StrataMemory", dependencies: ["StrataStorage"], path: "Modules/StrataMemory",
            packageAccess: false, swiftSettings: strictMemorySafety
        ),
        .target(
            name: "StrataConformance",
            dependencies: ["Strata", "StrataStorage", "StrataTestSupport"],
            path: "Modules/StrataConformance", swiftSettings: strictMemorySafety
        ),
        .target(
            name: "StrataTestSupport", dependencies: ["Strata", "StrataStorage"],
            path: "Modules/StrataTestSupport", swiftSettings: strictMemorySafety
        ),
        .target(name: "Ledger", dependencies: ["Strata"], path: "Modules/Ledger", swiftSettings: strictMemorySafety),
        .executableTarget(
            name: "ledger",
            dependencies: ["Ledger", "Strata", "StrataSQLite", "StrataLMDB", "StrataPostgres"],
            path: "Examples/Ledger"
        ),
        .target(
            name: "ResponsivenessKit",
            dependencies: ["Ledger", "Strata", "StrataTestSupport"],
            path: "Examples/ResponsivenessKit"
        ),
        .executableTarget(
            name: "responsiveness",
            dependencies: ["Ledger", "Strata", "StrataSQLite", "StrataLMDB", "ResponsivenessKit", "StrataTestSupport"],
            path: "Examples/Responsiveness"
        ),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "Ledger", "Strata", "StrataStorage", "StrataSQLite", "StrataLMDB", "StrataPostgres", "CSQLite", "CLMDB",
                "CPostgres",
                "ResponsivenessKit", "StrataTestSupport",
            ],
            path: "Benchmarks"
        ),
        // The `strata` command line: the logic in a library the tests can reach, argv in main.swift.
        .target(
            name: "StrataTool", dependencies: ["StrataStorage", "StrataSQLite", "StrataLMDB", "StrataPostgres"],
            path: "Modules/StrataTool", swiftSettings: strictMemorySafety
        ),
        .executableTarget(name: "strata", dependencies: ["StrataTool"], path: "Modules/StrataCommand"),
        // The project's own PostgreSQL test stores (not a product: StrataTestSupport needs no libpq).
        .target(
            name: "PostgresTestStores", dependencies: ["StrataTestSupport", "StrataPostgres", "StrataStorage"],
            path: "Tests/PostgresTestStores", swiftSettings: strictMemorySafety
        ),
        // Tests/HelperPrograms: the programs the tests start, and the crash models they share with the tests.
        .target(name: "CrashModels", dependencies: ["Strata"], path: "Tests/HelperPrograms/CrashModels"),
        .executableTarget(
            name: "strata-crash-writer",
            dependencies: [
                "Strata", "StrataSQLite", "StrataLMDB", "StrataPostgres", "CrashModels", "StrataTestSupport", "Ledger",
                "PostgresTestStores",
            ],
            path: "Tests/HelperPrograms/CrashWriter"
        ),
        .executableTarget(
            name: "strata-conformance-peer",
            dependencies: [
                "StrataConformance", "Strata", "StrataSQLite", "StrataLMDB", "StrataPostgres", "StrataMemory",
                "StrataTestSupport", "PostgresTestStores",
            ],
            path: "Tests/HelperPrograms/ConformancePeer"
        ),
        .executableTarget(
            name: "strata-probe",
            dependencies: [
                "Strata", "StrataStorage", "StrataSQLite", "StrataLMDB", "StrataPostgres", "StrataTestSupport",
                "CSQLite",
                "CLMDB", "PostgresTestStores",
            ],
            path: "Tests/HelperPrograms/StrataProbe"
        ),
        .executableTarget(
            name: "strata-quickstart",
            dependencies: ["Strata", "StrataSQLite", "StrataLMDB"],
            path: "Examples/QuickStart"
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: [
                "Strata", "StrataStorage", "StrataSQLite", "StrataLMDB", "StrataPostgres", "StrataMemory",
                "StrataConformance", "StrataTestSupport", "Ledger", "CSQLite", "CLMDB", "CPostgres", "CrashModels", "PostgresTestStores",
                "StrataTool", "strata",
            ],
            path: "Tests/StrataTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// Targets written in C, which take no Swift settings.
let cTargets: Set<String> = ["CStrataCRC"]

for target in package.targets where target.type != .system && !cTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}

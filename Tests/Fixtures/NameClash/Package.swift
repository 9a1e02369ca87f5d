// swift-tools-version:6.0
import PackageDescription

// A user's package that depends on Strata and also declares types whose names the engine interface
// uses (`Filter`, `ChangeSet`, `FetchPlan`, `SortKey`). It must build with those names unqualified:
// `import Strata` and `import StrataSQLite` must not bring the engine interface's types into scope.
// CI builds it (`swift build --package-path Tests/Fixtures/NameClash`).
let package = Package(
    name: "NameClash",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Strata", path: "../../..")],
    targets: [
        .target(name: "ShopTypes", path: "Sources/ShopTypes"),
        .executableTarget(
            name: "ShopApp",
            dependencies: [
                "ShopTypes",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataSQLite", package: "Strata"),
            ],
            path: "Sources/ShopApp"
        ),
    ],
    swiftLanguageModes: [.v6]
)

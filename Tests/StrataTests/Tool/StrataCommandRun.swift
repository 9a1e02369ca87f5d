import Foundation
import Strata
import StrataTestSupport
import Testing

/// Runs the `strata` executable (built next to the test binary) as a process, as a user would.
struct StrataCommandRun {
    let status: Int32
    let output: String
    let error: String

    /// The executable built next to the test binary.
    static var url: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("strata")
    }

    static func requireBuilt() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: url.path), "build the strata product first (swift build)")
    }

    /// Runs `strata ARGUMENTS…` to its end, on a thread of its own.
    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> StrataCommandRun {
        try requireBuilt()
        return try await run(executable: url, arguments, environment: environment)
    }

    /// Runs any executable as ``run(_:environment:)`` runs `strata`: to its end, on a thread of its
    /// own, reading its standard output and standard error at the same time (``ChildProcess``).
    static func run(
        executable: URL, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> StrataCommandRun {
        try await Blocking.run {
            let child = try ChildProcess.run(executable, arguments, environment: environment)
            return StrataCommandRun(
                status: child.status, output: String(decoding: child.output, as: UTF8.self),
                error: String(decoding: child.error, as: UTF8.self))
        }
    }

    /// The output parsed as a JSON object.
    func json() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "not JSON: \(output)")
    }

    /// The store argument that names `store` on the command line.
    static func argument(for store: TestStore) throws -> String {
        switch store.kind {
        case .sqlite: return "sqlite:" + store.directory.appendingPathComponent("store.sqlite").path
        case .lmdb: return "lmdb:" + store.directory.appendingPathComponent("store.lmdb").path
        case .postgres:
            let url = try #require(
                TestPostgres.url, "STRATA_POSTGRES_URL is not set: run with Scripts/with-postgres.sh")
            let schema = TestPostgres.schema(for: store.directory.appendingPathComponent("store.postgres"))
            return url + (url.contains("?") ? "&" : "?") + "schema=" + schema
        case .memory: return "memory:" + store.directory.path
        }
    }
}

/// A store of the test models for the tool's tests: two accounts, three entries, a tag on both
/// accounts, and the history of those saves.
enum ToolFixture {
    static func seededStore(_ kind: EngineKind) async throws -> TestStore {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            let checking = Account(context: context)
            checking.name = "Checking"
            let savings = Account(context: context)
            savings.name = "Savings"
            let tag = Tag(context: context)
            tag.label = "mine"
            _ = tag.accounts.insert(checking)
            _ = tag.accounts.insert(savings)
            try context.save()
            for amount in [100, -20, 5] as [Int64] {
                let entry = Entry(context: context)
                entry.amount = amount
                entry.account = checking
                try context.save()
            }
        }
        container.close()
        return store
    }
}

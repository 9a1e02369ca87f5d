import Foundation
import StrataStorage
import StrataTestSupport
import Testing

extension LedgerTests {
    /// The built `ledger` command line opens a version 1 store, migrates it with a progress line
    /// on standard error, and then works on it.
    ///
    /// The `ledger` executable is another process on the store: the engines it shares
    /// (``EngineKind/sharedAcrossProcesses``); an in-memory store lives in this process only.
    @Suite("ledger CLI: a version 1 store migrates with a progress line")
    struct LedgerCLIMigrationTests {
        @Test(
            "ledger migrates a v1 store, shows the progress line once, then shows the categories",
            arguments: EngineKind.sharedAcrossProcesses)
        func migratesWithProgress(kind: EngineKind) async throws {
            let binary = try Self.ledgerBinary()
            let store = try TestStore(kind)
            try await LedgerV1Store.write(to: store.configuration)
            let options = Self.options(kind, store)

            // On a terminal (forced: standard error is a pipe here) the line is rewritten in place.
            let first = try await BenchmarkBinary.run(
                binary, options + ["history", "Checking"], environment: ["LEDGER_PROGRESS": "inplace"])
            #expect(first.status == 0, "ledger failed: \(first.errorOutput)")
            #expect(first.errorOutput.hasPrefix("\rmigrating store: 0%"), "\(String(reflecting: first.errorOutput))")
            #expect(first.errorOutput.contains("\rmigrating store: 100%"))
            let summary = try #require(first.errorOutput.split(separator: "\r").last.map(String.init))
            #expect(
                summary.wholeMatch(of: /migrated store from v1 to v4 in [0-9]+\.[0-9] s\n/) != nil,
                "\(String(reflecting: summary))")
            // The history shows the notes (version 1's memos) with the categories the stage gave them.
            let rent = first.output.split(separator: "\n").first { $0.contains("Rent") }
            #expect(rent?.contains("housing") == true, "\(first.output)")
            #expect(first.output.contains("Checking: 4,009.40 USD after 5 transaction(s)"), "\(first.output)")

            let second = try await BenchmarkBinary.run(
                binary, options + ["transfer", "Checking", "Wallet", "20", "Top up"])
            #expect(second.status == 0, "ledger failed: \(second.errorOutput)")
            #expect(second.errorOutput.isEmpty, "the store was migrated again: \(second.errorOutput)")
            #expect(second.output.contains("3,989.40 USD"), "\(second.output)")
        }

        @Test("on LMDB, which rewrites every row, the lines count up by tenths while 12,000 transactions migrate")
        func longMigrationShowsIntermediateProgress() async throws {
            let binary = try Self.ledgerBinary()
            let store = try TestStore(.lmdb)
            try await LedgerV1Store.writeBulk(count: 12_000, to: store.configuration)

            let run = try await BenchmarkBinary.run(binary, Self.options(.lmdb, store) + ["account", "list"])
            #expect(run.status == 0, "ledger failed: \(run.errorOutput)")
            // Standard error is a pipe (a log): one line per tenth, then the summary; no carriage return.
            #expect(!run.errorOutput.contains("\r"), "\(String(reflecting: run.errorOutput))")
            let lines = run.errorOutput.split(separator: "\n")
            let percents = lines.compactMap { line in
                line.wholeMatch(of: /migrating store: ([0-9]+)%/).flatMap { Int($0.1) }
            }
            #expect(percents.count == lines.count - 1, "\(lines)")
            #expect(percents.first == 0 && percents.last == 100, "\(percents)")
            #expect(percents.contains { (1...99).contains($0) }, "no progress between 0% and 100%: \(percents)")
            #expect(percents.map { $0 / 10 } == Array(Set(percents.map { $0 / 10 })).sorted(), "\(percents)")
            #expect(
                lines.last?.wholeMatch(of: /migrated store from v1 to v4 in [0-9]+\.[0-9] s/) != nil
                    && run.errorOutput.hasSuffix("\n"), "\(lines)")
            #expect(run.output.contains("Bulk"), "\(run.output)")
        }

        static func ledgerBinary() throws -> URL {
            try #require(
                BenchmarkBinary.searched.map { $0.appendingPathComponent("ledger") }
                    .first { FileManager.default.isExecutableFile(atPath: $0.path) },
                "the ledger executable was not found next to the test bundle; build it with swift build --build-tests")
        }

        /// `--engine` and `--store` for the store that `TestStore` makes.
        static func options(_ kind: EngineKind, _ store: TestStore) -> [String] {
            switch kind {
            case .memory:
                // Its own process cannot open this process's in-memory store: these tests take
                // EngineKind.sharedAcrossProcesses.
                Issue.record("the ledger executable cannot open an in-memory store")
                return []
            case .sqlite, .lmdb:
                return ["--engine", kind.rawValue, "--store", store.configuration.location.path]
            case .postgres:
                // The ledger takes the server's URL and the store's schema.
                return [
                    "--engine", "postgres", "--store", TestPostgres.url ?? "", "--schema", store.postgresSchema,
                ]
            }
        }
    }
}

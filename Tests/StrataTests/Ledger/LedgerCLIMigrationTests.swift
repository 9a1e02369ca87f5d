import Foundation
import Testing

extension LedgerTests {
    /// The built `ledger` command line opens a version 1 store, migrates it with a progress line
    /// on standard error, and then works on it.
    @Suite("ledger CLI: a version 1 store migrates with a progress line")
    struct LedgerCLIMigrationTests {
        @Test(
            "ledger migrates a v1 store, shows the progress line once, then shows the categories",
            arguments: EngineKind.allCases)
        func migratesWithProgress(kind: EngineKind) async throws {
            let binary = try #require(
                BenchmarkBinary.searched.map { $0.appendingPathComponent("ledger") }
                    .first { FileManager.default.isExecutableFile(atPath: $0.path) },
                "the ledger executable was not found next to the test bundle; build it with swift build --build-tests")
            let store = try TestStore(kind)
            try await LedgerV1Store.write(to: store.configuration)
            let path = store.directory.appendingPathComponent(kind == .sqlite ? "store.sqlite" : "store.lmdb").path
            let options = ["--engine", kind.rawValue, "--store", path]

            let first = try BenchmarkBinary.run(binary, options + ["history", "Checking"])
            #expect(first.status == 0, "ledger failed: \(first.errorOutput)")
            #expect(first.errorOutput.hasPrefix("\rmigrating store: 0%"), "\(String(reflecting: first.errorOutput))")
            #expect(first.errorOutput.contains("\rmigrating store: 100%"))
            let summary = try #require(first.errorOutput.split(separator: "\r").last.map(String.init))
            #expect(
                summary.wholeMatch(of: /migrated store from v1 to v2 in [0-9]+\.[0-9] s\n/) != nil,
                "\(String(reflecting: summary))")
            // The history shows the notes (version 1's memos) with the categories the stage gave them.
            let rent = first.output.split(separator: "\n").first { $0.contains("Rent") }
            #expect(rent?.contains("housing") == true, "\(first.output)")
            #expect(first.output.contains("Checking: 4,009.40 USD after 5 transaction(s)"), "\(first.output)")

            let second = try BenchmarkBinary.run(binary, options + ["transfer", "Checking", "Wallet", "20", "Top up"])
            #expect(second.status == 0, "ledger failed: \(second.errorOutput)")
            #expect(second.errorOutput.isEmpty, "the store was migrated again: \(second.errorOutput)")
            #expect(second.output.contains("3,989.40 USD"), "\(second.output)")
        }
    }
}

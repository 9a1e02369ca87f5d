import Foundation
import Testing

extension LedgerTests {
    /// The built `ledger` command line runs `import`, `report` and `purge` on a store, with a
    /// progress line for a long import and one-line errors for bad input.
    ///
    /// The `ledger` executable is another process on the store: the engines it shares
    /// (``EngineKind/sharedAcrossProcesses``); an in-memory store lives in this process only.
    @Suite("ledger CLI: import, report and purge")
    struct LedgerCLIBatchTests {
        @Test(
            "import shows progress and upserts, report sums, purge keeps balances; bad input gets one-line errors",
            arguments: EngineKind.sharedAcrossProcesses)
        func importReportPurge(kind: EngineKind) async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let store = try TestStore(kind)
            let options = LedgerCLIMigrationTests.options(kind, store)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-cli-batch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            for command in [
                ["init"], ["account", "add", "Checking", "--opening", "1000"], ["account", "add", "Savings"],
            ] {
                let run = try await BenchmarkBinary.run(binary, options + command)
                try #require(run.status == 0, "ledger \(command) failed: \(run.errorOutput)")
            }

            // 600 lines: 300 per account, each +1.00 (Checking) or +2.00 (Savings), two a day from 2024-01-01.
            let csv = directory.appendingPathComponent("bank.csv")
            try Self.file(count: 600, amountOffset: 0).write(to: csv, atomically: true, encoding: .utf8)
            // On a terminal (forced: standard error is a pipe here) the line is rewritten in place.
            let first = try await BenchmarkBinary.run(
                binary, options + ["import", csv.path], environment: ["LEDGER_PROGRESS": "inplace"])
            #expect(first.status == 0, "\(first.errorOutput)")
            #expect(first.output == "Imported bank.csv: 600 line(s), 600 added, 0 updated.\n", "\(first.output)")
            let percents = first.errorOutput.split(separator: "\r").compactMap { part in
                part.wholeMatch(of: /importing: ([0-9]+)% \([0-9]+ of 600 lines\)\n?/).flatMap { Int($0.1) }
            }
            #expect(percents.first == 0 && percents.last == 100, "\(String(reflecting: first.errorOutput))")
            #expect(percents == percents.sorted() && first.errorOutput.hasSuffix("\n"))

            // Again with every amount 0.50 higher: updated, not added.
            try Self.file(count: 600, amountOffset: 50).write(to: csv, atomically: true, encoding: .utf8)
            let second = try await BenchmarkBinary.run(binary, options + ["import", csv.path])
            #expect(second.output == "Imported bank.csv: 600 line(s), 0 added, 600 updated.\n", "\(second)")
            // Into a pipe (a log): one line per tenth, no carriage return.
            let lines = second.errorOutput.split(separator: "\n", omittingEmptySubsequences: false)
            let tenths = lines.dropLast().compactMap { line in
                line.wholeMatch(of: /importing: ([0-9]+)% \([0-9]+ of 600 lines\)/).flatMap { Int($0.1) }
            }
            #expect(!second.errorOutput.contains("\r") && lines.last == "", "\(String(reflecting: second.errorOutput))")
            #expect(tenths.count == lines.count - 1 && tenths.first == 0 && tenths.last == 100, "\(tenths)")
            #expect(
                tenths.map { $0 / 10 } == Array(Set(tenths.map { $0 / 10 })).sorted(), "one line a tenth: \(tenths)")
            let accounts = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            // Checking: 1,000.00 + 300 × 1.50; Savings: 300 × 2.50.
            #expect(accounts.output.contains("1,450.00 USD") && accounts.output.contains("750.00 USD"), "\(accounts)")

            // February: days 31 to 59 of the file, lines 31 to 59 of each account's cycle.
            let report = try await BenchmarkBinary.run(binary, options + ["report", "--month", "2024-02"])
            #expect(report.status == 0, "\(report.errorOutput)")
            let rows = report.output.split(separator: "\n").map {
                $0.split(separator: " ", omittingEmptySubsequences: true)
            }
            #expect(rows.first?.joined(separator: " ") == "Transactions of 2024-02 by category and account:")
            #expect(rows.contains { $0 == ["income", "Checking", "29", "43.50", "USD"] }, "\(report.output)")
            #expect(rows.contains { $0 == ["income", "Savings", "29", "72.50", "USD"] }, "\(report.output)")

            // Purge January: 31 days × 2 accounts; balances unchanged.
            let purge = try await BenchmarkBinary.run(binary, options + ["purge", "--before", "2024-02-01"])
            #expect(purge.status == 0, "\(purge.errorOutput)")
            #expect(
                purge.output.hasPrefix(
                    "Purged 62 transaction(s) dated before 2024-02-01 and 62 import line(s) with them; "
                        + "balances are unchanged.\n"
                ),
                "\(purge.output)")
            let after = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            // Balances as before; the openings took January: 1,000.00 + 31 × 1.50 and 31 × 2.50.
            #expect(after.output.contains("1,450.00 USD") && after.output.contains("750.00 USD"), "\(after)")
            #expect(after.output.contains("1,046.50 USD") && after.output.contains("77.50 USD"), "\(after)")
            let nothing = try await BenchmarkBinary.run(binary, options + ["purge", "--before", "2024-02-01"])
            #expect(
                nothing.output == "No transactions are dated before 2024-02-01; nothing was purged.\n", "\(nothing)")

            // Bad input: one line on standard error, the right exit status, nothing written.
            let bad = directory.appendingPathComponent("bad.csv")
            try "\(Self.header)\nx-1,Checking,2024-05-01,1.00,,\nx-2,Checking,2024-05-02,1.005,,\n"
                .write(to: bad, atomically: true, encoding: .utf8)
            for (command, status, message) in [
                (
                    ["import", bad.path], Int32(65),
                    "ledger: error: Line 3 of the import file: the amount \"1.005\" is unusable: use at most 2 digits "
                        + "after the decimal point. Nothing was imported; fix the line and import the file again.\n"
                ),
                (
                    ["report", "--month", "2024-2"], 65,
                    "ledger: error: Invalid date \"2024-2\": write it as YYYY-MM, such as 2024-03.\n"
                ),
                (
                    ["purge"], 64,
                    "ledger: error: --before is needed; expected: ledger purge --before YYYY-MM-DD. "
                        + "Run `swift run ledger --help` for usage.\n"
                ),
            ] {
                let run = try await BenchmarkBinary.run(binary, options + command)
                #expect(run.status == status && run.errorOutput == message && run.output.isEmpty, "\(command): \(run)")
            }
            let unchanged = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            #expect(unchanged.output == after.output)
        }

        @Test(
            "sums past 64 bits: report and purge exit 65 with the ledger's message, import names the line; no writes",
            arguments: EngineKind.sharedAcrossProcesses)
        func sumsPastRange(kind: EngineKind) async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let store = try TestStore(kind)
            let options = LedgerCLIMigrationTests.options(kind, store)
            let largest = "92233720368547758.07"
            // Big's balances: -largest, 0 and largest; its two March deposits sum to twice the largest.
            let deposits = store.directory.appendingPathComponent("deposits.csv")
            try "\(Self.header)\nb-1,Big,2024-03-01,\(largest),income,\nb-2,Big,2024-03-02,\(largest),income,\n"
                .write(to: deposits, atomically: true, encoding: .utf8)
            let setup: [[String]] = [
                ["init"], ["account", "add", "Big", "--opening", "-\(largest)"], ["import", deposits.path],
            ]
            for command in setup {
                let run = try await BenchmarkBinary.run(binary, options + command)
                try #require(run.status == 0, "ledger \(command) failed: \(run.errorOutput)")
            }
            let before = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            // Line 3 takes the balance from largest - 1.00 to largest + 1.00.
            let past = store.directory.appendingPathComponent("past.csv")
            try "\(Self.header)\nb-3,Big,2024-04-01,-1.00,,\nb-4,Big,2024-04-02,2.00,,\n"
                .write(to: past, atomically: true, encoding: .utf8)

            let beyond = "add up to more than the ledger can hold (at most \(largest) either way)"
            let refusals: [(command: [String], message: String)] = [
                (
                    ["report", "--month", "2024-03"],
                    "The 2024-03 transactions of Big in the category \"income\" \(beyond), so the month cannot be "
                        + "reported. Look for a wrongly entered amount among them (ledger history Big) and correct it."
                ),
                (
                    ["purge", "--before", "2024-04-01"],
                    "The transactions of Big dated before 2024-04-01 \(beyond), so they cannot be moved into its "
                        + "opening balance at once. Nothing was purged; purge up to an earlier day first, then up to "
                        + "this one."
                ),
                (
                    ["import", past.path],
                    "Line 3 of the import file: the amount \"2.00\" is unusable: with it, the balance of Big would go "
                        + "past what a ledger can hold (at most \(largest) either way); correct the amount or split it "
                        + "across accounts. Nothing was imported; fix the line and import the file again."
                ),
            ]
            for (command, message) in refusals {
                let run = try await BenchmarkBinary.run(binary, options + command)
                #expect(run.status == 65, "\(command): \(run)")
                #expect(run.errorOutput == "ledger: error: \(message)\n" && run.output.isEmpty, "\(command): \(run)")
            }
            let after = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            // The opening balance is where the failed purge would have moved the deposits.
            #expect(
                after.output == before.output && after.output.contains("-92,233,720,368,547,758.07 USD"), "\(after)")
            // The exit status is the one --help gives for the ledger's refusals.
            let help = try await BenchmarkBinary.run(binary, ["--help"])
            #expect(help.output.contains("65 refused by the ledger"))
            #expect(help.output.contains("amounts that add up to more than the ledger holds in a"), "\(help.output)")
        }

        static let header = "external_id,account,date,amount,category,note"

        /// `count` lines alternating Checking (1.00 + offset) and Savings (2.00 + offset), two a day
        /// from 2024-01-01, all with the note "Salary" (category income).
        static func file(count: Int, amountOffset: Int) -> String {
            let start = Date(timeIntervalSince1970: 1_704_067_200)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            var lines = [header]
            for index in 0..<count {
                let checking = index.isMultiple(of: 2)
                let cents = (checking ? 100 : 200) + amountOffset
                let day = formatter.string(from: start.addingTimeInterval(Double(index / 2) * 86_400))
                lines.append(
                    "cli-\(index),\(checking ? "Checking" : "Savings"),\(day),"
                        + "\(cents / 100).\(String(format: "%02d", cents % 100)),,Salary"
                )
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }
}

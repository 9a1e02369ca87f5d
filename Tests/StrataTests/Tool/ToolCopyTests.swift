import CrashModels
import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import StrataTestSupport
import Testing

@Suite("strata copy")
struct ToolCopyTests {
    /// A URI saved before a copy and what it named.
    struct SavedURI: Sendable {
        let uri: URL
        let entity: String
        let number: Int64
    }

    /// The URIs of every account and entry of a crash-model store, with their numbers.
    static func savedURIs(_ configuration: EngineConfiguration) async throws -> [SavedURI] {
        let container = try PersistentContainer(schema: try CrashModel.schema(), engine: configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        return try await context.perform {
            try context.fetch(FetchRequest<CrashAccount>()).map {
                SavedURI(uri: $0.objectID.uriRepresentation, entity: "Account", number: Int64($0.number))
            }
                + context.fetch(FetchRequest<CrashEntry>()).map {
                    SavedURI(uri: $0.objectID.uriRepresentation, entity: "Entry", number: $0.sequence)
                }
        }
    }

    /// The URIs that do not name the same object in the store `configuration` opens.
    static func unresolved(_ uris: [SavedURI], in configuration: EngineConfiguration) async throws -> [String] {
        let container = try PersistentContainer(schema: try CrashModel.schema(), engine: configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        return try await context.perform {
            var wrong: [String] = []
            for saved in uris {
                do {
                    let id = try context.managedObjectID(forURIRepresentation: saved.uri)
                    let number =
                        saved.entity == "Account"
                        ? Int64(try context.existingObject(with: id, as: CrashAccount.self).number)
                        : try context.existingObject(with: id, as: CrashEntry.self).sequence
                    if number != saved.number { wrong.append("\(saved.uri) names \(number), not \(saved.number)") }
                } catch {
                    wrong.append("\(saved.uri): \(error)")
                }
            }
            return wrong
        }
    }

    /// Runs `strata copy FROM TO --json` and returns its outcome's digest.
    static func copy(_ from: String, _ to: String) async throws -> [String: Any] {
        let run = try await StrataCommandRun.run(["copy", from, to, "--json", "--batch-rows", "500"])
        try #require(run.status == 0, "copy \(from) \(to): \(run.error)")
        #expect(run.error.isEmpty, "progress or noise on a pipe: \(run.error)")
        return try #require(try run.json()["digest"] as? [String: Any])
    }

    @Test("SQLite → PostgreSQL → LMDB → SQLite while a writer saves: checksums equal, old URIs resolve")
    func copyChainUnderLoad() async throws {
        try #require(TestPostgres.url != nil, "STRATA_POSTGRES_URL is not set: run with Scripts/with-postgres.sh")
        let source = try TestStore(.sqlite)
        let writer = try ToolWriterProcess(kind: .sqlite, location: source.configuration.location)
        try await writer.waitPast(40)
        let uris = try await Self.savedURIs(source.configuration)
        let before = writer.acknowledged
        let postgres = try TestStore(.postgres)
        let lmdb = try TestStore(.lmdb)
        let last = try TestStore(.sqlite)
        let first = try await Self.copy(
            try StrataCommandRun.argument(for: source), try StrataCommandRun.argument(for: postgres))
        let second = try await Self.copy(
            try StrataCommandRun.argument(for: postgres), try StrataCommandRun.argument(for: lmdb))
        let third = try await Self.copy(
            try StrataCommandRun.argument(for: lmdb), try StrataCommandRun.argument(for: last))
        try await writer.waitPast(writer.acknowledged + 10) // the writer kept going through the copies
        writer.stop()

        #expect(NSDictionary(dictionary: first) == NSDictionary(dictionary: second))
        #expect(NSDictionary(dictionary: second) == NSDictionary(dictionary: third))
        let (highest, problems) = try await CrashStoreCheck.prefixProblems(
            last.configuration, atLeast: before, atMost: writer.acknowledged + 2)
        #expect(problems.isEmpty, "\(problems)")
        let entries = try #require((first["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Entry" })
        #expect(entries["count"] as? Int == Int(highest))
        #expect(try await Self.unresolved(uris, in: last.configuration) == [])
        for store in [postgres, lmdb, last] {
            let verify = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: store)])
            #expect(verify.status == 0, "\(verify.output)\(verify.error)")
        }
    }

    @Test(
        "a copy keeps the key counters: a new object never takes a deleted object's key",
        arguments: EngineKind.sharedAcrossProcesses)
    func copyKeepsKeyCounters(kind: EngineKind) async throws {
        let source = try await ToolFixture.seededStore(kind)
        let container = try source.open()
        let context = container.newBackgroundContext()
        let deleted = try await context.perform {
            let entries = try context.fetch(FetchRequest<Entry>())
            let highest = try #require(entries.max { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) })
            let key = try #require(highest.objectID.primaryKey)
            context.delete(highest)
            try context.save()
            return key
        }
        container.close()
        let target = try TestStore(Self.next(after: kind))
        _ = try await Self.copy(try StrataCommandRun.argument(for: source), try StrataCommandRun.argument(for: target))
        let copied = try target.open()
        defer { copied.close() }
        let newContext = copied.newBackgroundContext()
        let key = try await newContext.perform {
            let context = newContext
            let entry = Entry(context: context)
            entry.amount = 1
            try context.save()
            return try #require(entry.objectID.primaryKey)
        }
        #expect(key > deleted, "the copy handed out key \(key) again (deleted: \(deleted))")
    }

    /// The engine a copy from `kind` goes to in the tests of one engine pair.
    static func next(after kind: EngineKind) -> EngineKind {
        switch kind {
        case .sqlite: .lmdb
        case .lmdb: TestPostgres.url == nil ? .sqlite : .postgres
        default: .sqlite
        }
    }

    @Test(
        "a copy refuses a target that holds a store, with status 10, and changes neither side",
        arguments: EngineKind.sharedAcrossProcesses)
    func copyRefusesANonEmptyTarget(kind: EngineKind) async throws {
        let source = try await ToolFixture.seededStore(kind)
        let target = try await ToolFixture.seededStore(Self.next(after: kind))
        let sourceArgument = try StrataCommandRun.argument(for: source)
        let targetArgument = try StrataCommandRun.argument(for: target)
        let sourceBefore = try await StrataCommandRun.run(["inspect", sourceArgument, "--json"]).output
        let targetBefore = try await StrataCommandRun.run(["inspect", targetArgument, "--json"]).output
        let run = try await StrataCommandRun.run(["copy", sourceArgument, targetArgument])
        #expect(run.status == 10, "\(run.error)")
        #expect(run.error.hasPrefix("strata: ") && run.error.contains("not empty"), "\(run.error)")
        #expect(try await StrataCommandRun.run(["inspect", sourceArgument, "--json"]).output == sourceBefore)
        #expect(try await StrataCommandRun.run(["inspect", targetArgument, "--json"]).output == targetBefore)
    }

    @Test(
        "a killed copy leaves a target marked unfinished, which a second copy refuses with status 11",
        arguments: EngineKind.sharedAcrossProcesses)
    func interruptedCopyIsRefused(kind: EngineKind) async throws {
        try StrataCommandRun.requireBuilt()
        let source = try TestStore(Self.next(after: kind))
        let container = try source.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            // Enough rows that a copy of one row per commit outlasts the polling below even on a
            // loaded machine (30,000 did not: under load an inspect took longer than the copy).
            for amount in 1...100_000 { Entry(context: context).amount = Int64(amount) }
            try context.save()
        }
        container.close()
        let target = try TestStore(kind)
        let sourceArgument = try StrataCommandRun.argument(for: source)
        let targetArgument = try StrataCommandRun.argument(for: target)
        let process = SpawnedProcess()
        process.executableURL = StrataCommandRun.url
        process.arguments = ["copy", sourceArgument, targetArgument, "--batch-rows", "1"]
        process.standardOutput = FileHandle.nullDevice
        // The copy's own account of itself, kept for the message should it end before the kill.
        let errorLog = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-copy-\(UUID().uuidString).stderr")
        try Data().write(to: errorLog)
        defer { try? FileManager.default.removeItem(at: errorLog) }
        process.standardError = try FileHandle(forWritingTo: errorLog)
        try process.run()
        // Kill it once the target shows rows: mid-copy, one row per commit.
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let inspect = try await StrataCommandRun.run(["inspect", targetArgument, "--json"])
            if inspect.status == 0, let entities = try inspect.json()["entities"] as? [[String: Any]],
                let rows = entities.map({ $0["rows"] as? Int ?? 0 }).max(), rows > 0
            {
                try #require(rows < 100_000, "the copy wrote every row before the test could kill it")
                break
            }
            let running = process.isRunning
            let outcome = running ? "running" : "status \(process.terminationStatus)"
            try #require(
                running && ContinuousClock.now < deadline,
                """
                the copy ended before it was killed (\(outcome)); inspect said \(inspect.status) \(inspect.error); \
                the copy's stderr: \((try? String(contentsOf: errorLog, encoding: .utf8)) ?? "unreadable")
                """)
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        let inspect = try await StrataCommandRun.run(["inspect", targetArgument])
        #expect(inspect.output.contains("history cursor strata-copy-unfinished"), "\(inspect.output)")
        let again = try await StrataCommandRun.run(["copy", sourceArgument, targetArgument])
        #expect(again.status == 11, "\(again.error)")
        #expect(again.error.contains("did not finish"), "\(again.error)")
        // An application cannot open the half copy (before, it opened it and wrote into it), and
        // `strata verify` says what it is, besides the rows it lacks.
        do {
            try target.open().close()
            Issue.record("an application opened the target of a copy that did not finish")
        } catch let error as StrataError {
            guard case .notAStore(_, let reason, _) = error, reason.contains("strata copy") else {
                Issue.record("expected .notAStore naming the unfinished copy, got \(error)")
                return
            }
        }
        let verify = try await StrataCommandRun.run(["verify", targetArgument])
        #expect(verify.status != 0 && verify.output.contains("has not finished"), "\(verify.output)")
    }
}

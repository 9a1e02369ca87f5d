import Foundation
import Strata
import Synchronization
import Testing

/// Migrations, history trims and history reads reach the hook; a slow or careless hook breaks
/// no save.
@Suite("Instrumentation: migrations, history, careless hooks")
struct InstrumentationStoreTests {
    @Test("a migration at open reports its progress, from start to end", arguments: EngineKind.allCases)
    func migrationProgress(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: RecordedSchemaModels.note(version: 1))
        let context = old.newBackgroundContext()
        try await context.perform {
            for title in ["Dune", "Solaris"] { RSNote(context: context).title = title }
            try context.save()
        }
        old.close()
        let log = EventLog()
        let progress = Mutex<[MigrationProgress]>([])
        let container = try PersistentContainer(
            schema: try Schema(version: 2, [IMNoteWithShelf.self]), migrationPlan: nil, engine: store.configuration,
            progress: { report in progress.withLock { $0.append(report) } }, instrumentation: log.hook)
        defer { container.close() }
        let reports = log.migrations
        #expect(reports.count >= 2)
        #expect(reports == progress.withLock { $0 })
        #expect(reports.first?.fractionCompleted == 0)
        #expect(reports.last?.fractionCompleted == 1)
        #expect(reports.allSatisfy { $0.storeVersion == 1 && $0.modelVersion == 2 })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted })

        // Opening the migrated store again migrates nothing and reports nothing.
        container.close()
        let again = EventLog()
        let reopened = try PersistentContainer(
            schema: try Schema(version: 2, [IMNoteWithShelf.self]), engine: store.configuration,
            instrumentation: again.hook)
        reopened.close()
        #expect(again.migrations.isEmpty)
    }

    @Test("a history trim is reported with the token it kept from", arguments: EngineKind.allCases)
    func historyTrim(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let log = EventLog()
        let container = try store.open(reportingTo: log)
        defer { container.close() }
        for name in ["A", "B", "C"] {
            let context = container.newBackgroundContext()
            try await context.perform {
                Account(context: context).name = name
                try context.save()
            }
        }
        let read = try await container.history()
        #expect(read.count == 3)
        let reads = log.engineCalls.filter { $0.operation == .historyRead }
        #expect(reads.first?.count == 3)
        let current = try await container.currentHistoryToken()
        log.clear()
        let kept = try await container.deleteHistory(before: current)
        let trim = try #require(log.trims.first)
        #expect(log.trims.count == 1)
        #expect(trim.requestedBefore == current.rawValue)
        #expect(trim.keptFrom == kept.rawValue)
        #expect(!trim.forced)
        #expect(trim.duration >= .zero)
        #expect(log.engineCalls.map(\.operation) == [.historyTrim])
    }

    @Test("a slow hook delays a save but does not break it", arguments: EngineKind.allCases)
    func slowHook(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let seen = Mutex<[String]>([])
        let hook = Instrumentation { event in
            guard case .commit = event else { return }
            Thread.sleep(forTimeInterval: 0.05)
            seen.withLock { $0.append("commit") }
        }
        let container = try PersistentContainer(
            schema: TestModels.schema, engine: store.configuration, instrumentation: hook)
        defer { container.close() }
        try await container.performUnitOfWork { context in
            Account(context: context).name = "A"
            try context.save()
        }
        // The event was delivered before the save returned, after the commit.
        #expect(seen.withLock { $0 } == ["commit"])
        let context = container.newBackgroundContext()
        #expect(try await context.perform { try context.count(for: FetchRequest<Account>()) } == 1)
    }

    @Test(
        "a hook whose own work fails, or that saves again from a task, breaks no save", arguments: EngineKind.allCases)
    func carelessHook(kind: EngineKind) async throws {
        struct HookFailure: Error {}
        let store = try TestStore(kind)
        let containerBox = Mutex<PersistentContainer?>(nil)
        let echoed = Atomic<Bool>(false)
        let echo = Mutex<Task<Void, any Error>?>(nil)
        let hook = Instrumentation { event in
            // A hook cannot throw: its failures are its own.
            _ = try? { () throws -> Void in throw HookFailure() }()
            guard case .commit = event, !echoed.exchange(true, ordering: .relaxed) else { return }
            // Re-entering the store from the hook, the only way it can: a task, after the fact.
            let container = containerBox.withLock { $0 }
            echo.withLock {
                $0 = Task {
                    let context = container!.newBackgroundContext()
                    try await context.perform {
                        Account(context: context).name = "echo"
                        try context.save()
                    }
                }
            }
        }
        let container = try PersistentContainer(
            schema: TestModels.schema, engine: store.configuration, instrumentation: hook)
        defer { container.close() }
        containerBox.withLock { $0 = container }
        try await container.performUnitOfWork { context in
            Account(context: context).name = "first"
            try context.save()
        }
        try await echo.withLock { $0 }!.value
        let context = container.newBackgroundContext()
        let names = try await context.perform {
            try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        }
        #expect(names == ["echo", "first"])
    }
}

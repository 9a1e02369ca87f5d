import Foundation
import PostgresTestStores
import Strata
import StrataLMDB
import StrataPostgres
import StrataSQLite
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

/// Schema evolution probed from the outside: plans, data and callers that a careful test of
/// each feature would not try.
@Suite struct MigrationProbeTests {
    /// Writes rows straight through an engine opened with `schema`.
    private func write(_ store: TestStore, _ schema: Schema, _ values: [[StoredValue]]) throws {
        let engine = try store.configuration.open(schema.storeSchema)
        defer { engine.close() }
        let keys = try engine.allocateKeys(entity: 0, count: values.count)
        var changes = ChangeSet()
        changes.inserts = zip(keys, values).map {
            RowWrite(entity: 0, key: $0, expectedVersion: 0, values: ContiguousArray($1))
        }
        try engine.commit(changes)
    }

    /// Every row of entity 0 read with `schema`, by key.
    private func rows(_ store: TestStore, _ schema: Schema) throws -> [[StoredValue]] {
        let engine = try store.configuration.open(schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: 0)).sorted { $0.key < $1.key }.map { Array($0.values) }
    }

    @Test(arguments: EngineKind.allCases)
    func renamesChainedAcrossAPlanKeepTheValues(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try write(store, try ProbeItemsV1.schema(), [[.text("one")], [.text("two")]])
        let container = try PersistentContainer(
            schema: try ProbeItemsV3.schema(), migrationPlan: ProbeItemsPlan.self, engine: store.configuration)
        container.close()
        #expect(try rows(store, try ProbeItemsV3.schema()) == [[.text("one")], [.text("two")]])
    }

    @Test(arguments: EngineKind.allCases)
    func aUniqueConstraintOverNullsMigratesAsAFreshStoreSavesThem(kind: EngineKind) throws {
        let unique = try Schema(version: 2, [ProbeUniqueTag.self])
        // A fresh store at version 2 takes two nils.
        let fresh = try TestStore(kind)
        try write(fresh, unique, [[.null], [.null], [.text("a")]])
        // So a version 1 store holding them migrates to it.
        let store = try TestStore(kind)
        try write(store, try Schema(version: 1, [ProbeTag.self]), [[.null], [.null], [.text("a")]])
        try PersistentContainer(schema: unique, engine: store.configuration).close()
        #expect(try rows(store, unique) == [[.null], [.null], [.text("a")]])
        // And the constraint holds afterwards.
        #expect(throws: StrataError.self) { try write(store, unique, [[.text("a")]]) }
        try write(store, unique, [[.null]])
    }

    @Test(arguments: EngineKind.allCases)
    func anEngineOfTheOldVersionStillOpenCannotWriteIntoAMigratedStore(kind: EngineKind) throws {
        let v1 = try Schema(version: 1, [ProbeTextScore.self])
        let v2 = try Schema(version: 2, [ProbeIntScore.self])
        let store = try TestStore(kind)
        try write(store, v1, [[.text("7")]])
        let old = try store.configuration.open(v1.storeSchema)
        defer { old.close() }
        var model = v2.storeSchema
        model.migrationPlan = try StoreMigrationPlan(
            versions: [v1.storeSchema, v2.storeSchema],
            stages: [.custom(from: 1, to: 2, willMigrate: nil, didMigrate: nil)])
        try store.configuration.open(model).close()
        // The old engine writes text into what is now an integer column.
        let key = try? old.allocateKeys(entity: 0, count: 1).lowerBound
        var changes = ChangeSet()
        changes.inserts = [RowWrite(entity: 0, key: key ?? 100, expectedVersion: 0, values: [.text("high")])]
        #expect(throws: StrataError.storeNewerThanModel(storeVersion: 2, modelVersion: 1)) {
            try old.commit(changes)
        }
        // The migrated store still reads with its model.
        #expect(try rows(store, v2) == [[.integer(0)]])
    }

    @Test(arguments: EngineKind.allCases)
    func aPlanThatStopsBeforeTheModelIsFollowedByInference(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try write(store, try ProbeItemsV1.schema(), [[.text("one")]])
        try PersistentContainer(
            schema: try ProbeItemsV3.schema(), migrationPlan: ProbeItemsShortPlan.self, engine: store.configuration
        ).close()
        #expect(try rows(store, try ProbeItemsV3.schema()) == [[.text("one")]])
    }

    @Test(arguments: EngineKind.allCases)
    func anEmptyPlanInfers(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try write(store, try ProbeItemsV1.schema(), [[.text("one")]])
        try PersistentContainer(
            schema: try ProbeItemsV2.schema(), migrationPlan: ProbeEmptyPlan.self, engine: store.configuration
        ).close()
        #expect(try rows(store, try ProbeItemsV2.schema()) == [[.text("one")]])
    }

    /// Nulls in a unique column made required with one default would all become that default:
    /// refused as an added unique constraint is, naming the entity and attribute, store unchanged.
    /// (SQLite's table rebuild surfaced SQLite's own failure, naming no attribute: "Uniqueness
    /// constraint on () violated".)
    @Test(arguments: EngineKind.allCases)
    func nullsFilledWithADefaultThatClashInAUniqueColumnAreRefusedByName(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let v1 = try Schema(version: 1, [ProbeUniqueTag.self])
        try write(store, v1, [[.null], [.null], [.text("a")]])
        #expect(throws: StrataError.constraintViolation(entity: "Tag", attributes: ["label"])) {
            try PersistentContainer(
                schema: try Schema(version: 2, [ProbeRequiredUniqueTag.self]), engine: store.configuration
            ).close()
        }
        #expect(try rows(store, v1) == [[.null], [.null], [.text("a")]])
    }

    /// A value too long for an LMDB index key, in a column that becomes indexed: LMDB refuses
    /// the migration as it refuses to save the value in a fresh store (validation, naming the
    /// attribute and the limit), and the store stays at version 1; SQLite, PostgreSQL and the
    /// in-memory engine (no key size limit) index it.
    @Test(arguments: EngineKind.allCases)
    func aValueTooLongToIndexInANewlyIndexedColumn(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let v1 = try Schema(version: 1, [ProbeTag.self])
        let v2 = try Schema(version: 2, [ProbeIndexedTag.self])
        let long = String(repeating: "x", count: 2_000)
        try write(store, v1, [[.text(long)]])
        switch kind {
        case .sqlite, .postgres, .memory:
            // PostgreSQL's btree entries hold about 2,700 bytes: 2,000 fit.
            try PersistentContainer(schema: v2, engine: store.configuration).close()
            #expect(try rows(store, v2) == [[.text(long)]])
        case .lmdb:
            let error = #expect(throws: StrataError.self) {
                try PersistentContainer(schema: v2, engine: store.configuration).close()
            }
            guard case .validation(let issues)? = error, let error else {
                Issue.record("expected a validation error, got \(String(describing: error))")
                return
            }
            #expect("\(error)".contains("Tag.label") && "\(error)".contains("511") && issues.count == 1)
            #expect(try rows(store, v1) == [[.text(long)]])
        }
    }

    /// A store made by a build of version 1 with an extra attribute (drift from the plan's
    /// version 1) is brought back to the plan's version 1 by inference, then runs the stages.
    @Test(arguments: EngineKind.allCases)
    func aStoreThatDriftedFromThePlansFirstVersionIsBroughtBackThenMigrated(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try write(store, try Schema(version: 1, [ProbeDriftedItem.self]), [[.text("one"), .text("draft")]])
        try PersistentContainer(
            schema: try ProbeItemsV3.schema(), migrationPlan: ProbeItemsPlan.self, engine: store.configuration
        ).close()
        #expect(try rows(store, try ProbeItemsV3.schema()) == [[.text("one")]])
    }

    /// A store at a version the plan lists, with an entity that version does not have (another
    /// application's store, at the same version number), is refused and left as it was: bringing
    /// it back to the plan's version would drop that entity with its rows.
    @Test(arguments: EngineKind.allCases)
    func aStoreWithAnEntityThePlansVersionLacksIsRefusedUntouched(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let other = try Schema(version: 1, [ProbeTag.self])
        try write(store, other, [[.text("kept")]])
        let error = #expect(throws: StrataError.self) {
            try PersistentContainer(
                schema: try ProbeItemsV3.schema(), migrationPlan: ProbeItemsPlan.self, engine: store.configuration
            ).close()
        }
        guard case .schemaMismatch(let storeVersion, _, let differences)? = error else {
            Issue.record("expected .schemaMismatch, got \(String(describing: error))")
            return
        }
        #expect(storeVersion == 1 && "\(differences)".contains("Tag"), "\(differences)")
        #expect(try rows(store, other) == [[.text("kept")]])
    }

    /// A custom stage whose changes clash on a unique attribute: the open rethrows the clash,
    /// which names the entity and attribute, and the store stays at version 1.
    @Test(arguments: EngineKind.allCases)
    func aUniqueClashMadeInsideAStageLeavesTheStoreUnchanged(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let v1 = try ProbeClashV1.schema()
        try write(store, v1, [[.text("one")], [.text("two")]])
        #expect(throws: StrataError.constraintViolation(entity: "Item", attributes: ["b"])) {
            try PersistentContainer(
                schema: try ProbeClashV2.schema(), migrationPlan: ProbeClashPlan.self, engine: store.configuration
            ).close()
        }
        #expect(try rows(store, v1) == [[.text("one")], [.text("two")]])
    }

    /// An engine still open with the old model reads the store after another engine migrated
    /// it (a custom stage changed a column's type): a typed refusal that says the store was
    /// upgraded, never a decode of new rows with the old layout, nor "the store is damaged".
    @Test(arguments: EngineKind.allCases)
    func anEngineOfTheOldVersionStillOpenReadsAMigratedStore(kind: EngineKind) throws {
        let v1 = try Schema(version: 1, [ProbeTextScore.self])
        let v2 = try Schema(version: 2, [ProbeIntScore.self])
        let store = try TestStore(kind)
        try write(store, v1, [[.text("7")]])
        let old = try store.configuration.open(v1.storeSchema)
        defer { old.close() }
        var model = v2.storeSchema
        model.migrationPlan = try StoreMigrationPlan(
            versions: [v1.storeSchema, v2.storeSchema],
            stages: [.custom(from: 1, to: 2, willMigrate: nil, didMigrate: nil)])
        try store.configuration.open(model).close()
        #expect(throws: StrataError.storeNewerThanModel(storeVersion: 2, modelVersion: 1)) {
            let reader = try old.makeReader()
            defer { reader.close() }
            _ = try reader.rows(for: FetchPlan(entity: 0))
        }
        #expect(try rows(store, v2) == [[.integer(0)]])
    }

    /// A stage that opens the store it is migrating (another container, same process) waits
    /// for the migration's own lock: no deadlock, the inner open's typed `.busy` after the busy
    /// timeout is rethrown, and the migration is rolled back (the store still opens at version 1).
    /// Serialized: its cases share the global slot that tells the stage which store to open.
    /// On the in-memory engine the inner open is refused at once: it runs on the migrating open's
    /// thread, so waiting would be waiting for itself.
    @Test(.serialized, arguments: EngineKind.allCases)
    func aStageThatOpensTheMigratingStoreAgainGetsBusyAndChangesNothing(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let v1 = try ProbeItemsV1.schema()
        try write(store, v1, [[.text("one")]])
        // The inner open waits a short busy timeout (the migration holds the lock until it ends).
        let inner: EngineConfiguration =
            switch kind {
            case .memory: store.configuration
            case .sqlite:
                .sqlite(
                    at: store.directory.appendingPathComponent("store.sqlite"),
                    options: SQLiteOptions(busyTimeout: .milliseconds(200)))
            case .lmdb:
                .lmdb(
                    at: store.directory.appendingPathComponent("store.lmdb"),
                    options: LMDBOptions(busyTimeout: .milliseconds(200)))
            case .postgres:
                TestPostgres.configuration(
                    at: store.directory.appendingPathComponent("store.postgres"),
                    options: PostgresOptions(poolSize: 2, lockTimeout: .milliseconds(200)))
            }
        probeReentrantStore.withLock { $0 = inner }
        defer { probeReentrantStore.withLock { $0 = nil } }
        let error = #expect(throws: StrataError.self) {
            try PersistentContainer(
                schema: try ProbeItemsV2.schema(), migrationPlan: ProbeReentrantPlan.self, engine: store.configuration
            ).close()
        }
        guard case .busy? = error else {
            Issue.record("expected busy, got \(String(describing: error))")
            return
        }
        #expect(try rows(store, v1) == [[.text("one")]])
    }

    /// An entity renamed twice across a plan (Person → Writer → Author), the second rename moving
    /// it to the other side of its many-to-many join, with 4,000 links: every link kept.
    @Test(arguments: EngineKind.allCases)
    func thousandsOfLinksThroughAnEntityRenamedTwice(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let people = 2_000
        let old = try store.open(schema: try ProbeCastV1.schema())
        let writer = old.newBackgroundContext()
        try await writer.perform {
            let genres = (0..<5).map { number in
                let genre = ProbeCastV1.Genre(context: writer)
                genre.label = "g\(number)"
                return genre
            }
            for number in 0..<people {
                let person = ProbeCastV1.Person(context: writer)
                person.name = "p\(number)"
                person.genres.insert(genres[number % 5])
                person.genres.insert(genres[(number + 2) % 5])
            }
            try writer.save()
        }
        old.close()
        let container = try PersistentContainer(
            schema: try ProbeCastV3.schema(), migrationPlan: ProbeCastPlan.self, engine: store.configuration)
        defer { container.close() }
        let reader = container.newBackgroundContext()
        let wrong = try await reader.perform {
            let authors = try reader.fetch(FetchRequest<ProbeCastV3.Author>())
            var wrong: [String] = []
            if authors.count != people { wrong.append("\(authors.count) authors") }
            for author in authors {
                guard let number = Int(author.name.dropFirst()) else { continue }
                let labels = Set(author.genres.map(\.label))
                if labels != ["g\(number % 5)", "g\((number + 2) % 5)"] { wrong.append("\(author.name): \(labels)") }
            }
            return wrong
        }
        let first = wrong.prefix(5)
        #expect(first.isEmpty, "\(wrong.count) wrong, first: \(first)")
    }

    /// A URI saved before an entity was renamed (`originalEntityName`) still names its object
    /// after the migration, as `Docs/Migrations.md` promises ("its keys, so object IDs and URIs
    /// stay valid"): the rename keeps the key, and the URI's old entity name resolves to the new.
    @Test(arguments: EngineKind.allCases)
    func aURISavedBeforeAnEntityRenameStillNamesItsObject(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: try ProbeCastV1.schema())
        let writer = old.newBackgroundContext()
        let uri = try await writer.perform {
            let person = ProbeCastV1.Person(context: writer)
            person.name = "Le Guin"
            try writer.save()
            return person.objectID.uriRepresentation
        }
        old.close()
        let container = try PersistentContainer(
            schema: try ProbeCastV2.schema(), migrationPlan: ProbeCastPlanToV2.self, engine: store.configuration)
        defer { container.close() }
        let reader = container.newBackgroundContext()
        let name = try await reader.perform {
            let id = try reader.managedObjectID(forURIRepresentation: uri)
            return try reader.existingObject(with: id, as: ProbeCastV2.Writer.self).name
        }
        #expect(name == "Le Guin")
    }

    /// A store with no rows at all renamed twice across a plan (its key counters and join too):
    /// the migrated store takes new objects and links, and hands out fresh keys.
    @Test(arguments: EngineKind.allCases)
    func anEmptyStoreMigratesThroughRenamesAndTakesNewObjects(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        try store.open(schema: try ProbeCastV1.schema()).close()
        let container = try PersistentContainer(
            schema: try ProbeCastV3.schema(), migrationPlan: ProbeCastPlan.self, engine: store.configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let labels = try await context.perform {
            for number in 0..<3 {
                let genre = ProbeCastV3.Genre(context: context)
                genre.label = "g\(number)"
                let author = ProbeCastV3.Author(context: context)
                author.name = "a\(number)"
                author.genres.insert(genre)
            }
            try context.save()
            let keys = Set(try context.fetch(FetchRequest<ProbeCastV3.Author>()).compactMap(\.objectID.primaryKey))
            let authors = try context.fetch(FetchRequest<ProbeCastV3.Author>(sortBy: [SortDescriptor(\.name)]))
            return (keys.count, authors.map { "\($0.name):\($0.genres.map(\.label).sorted())" })
        }
        #expect(labels.0 == 3)
        #expect(labels.1 == ["a0:[\"g0\"]", "a1:[\"g1\"]", "a2:[\"g2\"]"])
    }
}

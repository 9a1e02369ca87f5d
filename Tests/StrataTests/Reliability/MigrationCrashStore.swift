import CrashModels
import Foundation
import Strata
import StrataStorage
import Testing

/// The stores of ``MigrationCrashTests``: made at version 1, copied, and classified after a kill.
enum MigrationCrashStore {
    /// What a store holds after a kill.
    enum State: Equatable, CustomStringConvertible {
        /// Opens with version 1 and holds every version-1 row as it was made.
        case version1
        /// Refuses version 1 as a newer store, opens with version 2, and every row is migrated.
        case version2
        /// Anything else.
        case half(String)

        var description: String {
            switch self {
            case .version1: "version 1"
            case .version2: "version 2"
            case .half(let reason): "half-migrated: \(reason)"
            }
        }
    }

    /// The columns a fresh SQLite or PostgreSQL store has at each version (nil for LMDB, whose
    /// rows carry their column count and fail to decode with the wrong one).
    struct Shapes {
        var version1: Set<String>?
        var version2: Set<String>?

        init(kind: EngineKind, target: MigrationCrash.Target) async throws {
            guard kind != .lmdb else { return }
            let one = try TestStore(kind)
            try await makeVersion1(one, rows: 0)
            version1 = try columns(one)
            let two = try TestStore(kind)
            try PersistentContainer(schema: try target.schema(), engine: two.configuration).close()
            version2 = try columns(two)
        }
    }

    /// One item as read back, at either version.
    struct Item: CustomStringConvertible {
        var number: Int
        var title: String
        var note: String?
        var label: String??
        var score: Int?

        var description: String {
            "#\(number) \(title.debugDescription) note \(note ?? "nil") label \(label.map { $0 ?? "nil" } ?? "-") "
                + "score \(score.map(String.init) ?? "-")"
        }
    }

    /// Fills `store` with `rows` version-1 items (``MigrationCrash``'s contents) in one save.
    static func makeVersion1(_ store: TestStore, rows: Int) async throws {
        let container = try PersistentContainer(schema: try MigrationCrashV1.schema(), engine: store.configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        try await context.perform {
            for number in 0..<rows {
                let item = MigrationCrashV1.Item(context: context)
                item.number = number
                item.title = MigrationCrash.title(number)
                item.note = MigrationCrash.note(number)
            }
            try context.save()
        }
    }

    /// Replaces `destination`'s files with a copy of `source`'s (both closed); on PostgreSQL,
    /// its schema with a copy of `source`'s.
    static func copy(_ source: TestStore, to destination: TestStore) throws {
        if source.kind == .postgres {
            try PostgresSQL.copySchema(from: source.postgresSchema, to: destination.postgresSchema)
            return
        }
        try FileManager.default.removeItem(at: destination.directory)
        try FileManager.default.copyItem(at: source.directory, to: destination.directory)
    }

    /// The bytes of every store file but the lock files, which any open rewrites; on
    /// PostgreSQL, every row of the store's schema.
    static func fileContents(_ store: TestStore) throws -> [String: Data] {
        if store.kind == .postgres {
            return ["rows": Data(try PostgresSQL().dump(schema: store.postgresSchema).joined(separator: "\n").utf8)]
        }
        var contents: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: store.directory.path)
        where name.hasSuffix("lock.mdb") == false && name.hasSuffix("-shm") == false {
            let url = store.directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            contents[name] = try Data(contentsOf: url)
        }
        return contents
    }

    /// Opens the store with version 1, as an old copy of the app would; a store version 1
    /// refuses as newer is then opened with `target`'s version 2. Every row is checked, and the
    /// store's tables (SQLite) and integrity.
    static func classify(_ store: TestStore, target: MigrationCrash.Target, rows: Int, shapes: Shapes) async -> State {
        var problems: [String]
        var version = 1
        // A killed process's server session may still be finishing its last transaction: wait
        // for it to end before reading (`CrashSafetyTests.verify`).
        let leftover = store.kind == .postgres ? await CrashSafetyTests.leftoverSessions() : []
        do {
            problems = try await readVersion1(store, rows: rows) + leftover
        } catch StrataError.storeNewerThanModel(storeVersion: 2, modelVersion: 1),
            StrataError.schemaMismatch(storeVersion: 2, modelVersion: 1, _)
        {
            version = 2
            do {
                problems = try await readVersion2(store, target: target, rows: rows) + leftover
            } catch {
                return .half("refused by version 1 as a version-2 store, but unreadable with version 2: \(error)")
            }
        } catch {
            return .half("neither at version 1 nor refused as a version-2 store: \(error)")
        }
        if let expected = version == 1 ? shapes.version1 : shapes.version2 {
            do {
                let found = try columns(store)
                if found != expected {
                    problems.append("the Item table has the columns \(found.sorted()), not \(expected.sorted())")
                }
            } catch {
                problems.append("the Item table's columns could not be read: \(error)")
            }
        }
        problems += await CrashSafetyTests.integrityProblems(kind: store.kind, location: store.configuration.location)
        guard problems.isEmpty else { return .half("at version \(version): " + problems.joined(separator: "; ")) }
        return version == 1 ? .version1 : .version2
    }

    private static func readVersion1(_ store: TestStore, rows: Int) async throws -> [String] {
        let container = try PersistentContainer(schema: try MigrationCrashV1.schema(), engine: store.configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let items = try await context.perform {
            try context.fetch(FetchRequest<MigrationCrashV1.Item>()).map {
                Item(number: $0.number, title: $0.title, note: $0.note)
            }
        }
        return problems(items, rows: rows, target: nil)
    }

    private static func readVersion2(
        _ store: TestStore, target: MigrationCrash.Target, rows: Int
    ) async throws -> [String] {
        let container = try PersistentContainer(schema: try target.schema(), engine: store.configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let items = try await context.perform {
            switch target {
            case .inferred:
                try context.fetch(FetchRequest<MigrationCrashV2.Item>()).map {
                    Item(number: $0.number, title: $0.title, note: $0.note, label: .some($0.label))
                }
            case .staged:
                try context.fetch(FetchRequest<MigrationCrashV2Staged.Item>()).map {
                    Item(number: $0.number, title: $0.name, note: $0.note, label: .some($0.label), score: $0.score)
                }
            }
        }
        return problems(items, rows: rows, target: target)
    }

    /// What is wrong with `items`: every number once, every row's values as made, and, at
    /// version 2 (`target` set), as migrated.
    private static func problems(_ items: [Item], rows: Int, target: MigrationCrash.Target?) -> [String] {
        var problems: [String] = []
        let sorted = items.sorted { $0.number < $1.number }
        if sorted.map(\.number) != Array(0..<rows) {
            problems.append("\(items.count) items whose numbers are not exactly 0..<\(rows)")
        }
        let wrong = sorted.filter { item in
            var right = item.title == MigrationCrash.title(item.number) && item.note == MigrationCrash.note(item.number)
            if target != nil { right = right && item.label == .some(MigrationCrash.label) }
            if target == .staged { right = right && item.score == MigrationCrash.score(item.number) }
            return !right
        }
        if let first = wrong.first {
            problems.append("\(wrong.count) items hold other values than they should, the first \(first)")
        }
        return problems
    }

    /// The names of the SQLite store's `Item` columns.
    static func columns(_ store: TestStore) throws -> Set<String> {
        if store.kind == .postgres {
            let names = try PostgresSQL().execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'Item'",
                [store.postgresSchema])
            return Set(names.compactMap { $0.first ?? nil })
        }
        let raw = try RawSQLite(path: store.configuration.location.path)
        return Set(try raw.strings("SELECT name FROM pragma_table_info('Item')"))
    }
}

import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bad input gives a typed error — never a crash or a hang — and leaves any store untouched.
/// (Garbage, empty, truncated and foreign store files are covered by the conformance kit and
/// the engine suites; misuse of contexts by `MisuseTests`; bad URIs by the kit.)
@Suite("bad input")
struct BadInputTests {
    /// A saved store of the fixture schema; returns its location.
    static func makeStore(_ store: TestStore) async throws -> URL {
        let container = try store.open()
        try await container.performUnitOfWork { context in
            Account(context: context).name = "Precious"
            try context.save()
        }
        return store.configuration.location
    }

    /// Every regular file of a store with its bytes.
    static func snapshot(_ location: URL) -> [String: Data] {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory)
        let files = isDirectory.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(atPath: location.path)) ?? []).map { location.appendingPathComponent($0) }
            : [location]
        return Dictionary(uniqueKeysWithValues: files.filter { $0.lastPathComponent != "lock.mdb" }.map { ($0.path, (try? Data(contentsOf: $0)) ?? Data()) })
    }

    @Test("a read-only directory and read-only store files give typed errors (checked as an unprivileged user)", arguments: EngineKind.allCases)
    func readOnly(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let existing = try await Self.makeStore(store)
        let before = Self.snapshot(existing)
        let emptyDirectory = store.directory.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: emptyDirectory, withIntermediateDirectories: true)
        for path in [store.directory.path, emptyDirectory.path] + Array(before.keys) + [existing.path] {
            let isDirectory = (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeDirectory
            try FileManager.default.setAttributes([.posixPermissions: isDirectory ? 0o555 : 0o444], ofItemAtPath: path)
        }
        defer {
            for path in [store.directory.path, emptyDirectory.path, existing.path] + Array(before.keys) {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            }
        }
        let newStore = kind.configuration(in: emptyDirectory).location.path
        let existingStore = existing.path
        await #expect(processExitsWith: .success) { [kind = kind as EngineKind, newStore = newStore as String, existingStore = existingStore as String] in
            // Root ignores permission bits: drop to an unprivileged user first.
            if getuid() == 0 {
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(3) }
            }
            for path in [newStore, existingStore] {
                let url = URL(fileURLWithPath: path)
                let engine: EngineConfiguration = kind == .lmdb ? .lmdb(at: url) : kind.configuration(in: url.deletingLastPathComponent())
                do {
                    let container = try PersistentContainer(schema: TestModels.schema, engine: engine)
                    try await container.performUnitOfWork { context in
                        Account(context: context).name = "Intruder"
                        try context.save()
                    }
                    exit(4)
                } catch is StrataError {
                    continue
                } catch {
                    exit(5)
                }
            }
            exit(0)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: store.directory.path)
        #expect(Self.snapshot(existing) == before, "the read-only store changed")
    }

    @Test("a file-size limit (a full disk) gives a typed error and the store stays readable", arguments: EngineKind.allCases)
    func fileSizeLimit(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let location = try await Self.makeStore(store)
        let path = location.path
        await #expect(processExitsWith: .success) { [kind = kind as EngineKind, path = path as String] in
            signal(SIGXFSZ, SIG_IGN)
            var limit = rlimit(rlim_cur: 4 << 20, rlim_max: 4 << 20)
            guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { exit(3) }
            let url = URL(fileURLWithPath: path)
            let engine: EngineConfiguration = kind == .lmdb ? .lmdb(at: url) : kind.configuration(in: url.deletingLastPathComponent())
            do {
                let container = try PersistentContainer(schema: TestModels.schema, engine: engine)
                for batch in 0..<40 {
                    try await container.performUnitOfWork(retries: .none) { context in
                        for index in 0..<50 {
                            let account = Account(context: context)
                            account.name = "bulk-\(batch)-\(index)"
                            account.note = String(repeating: "x", count: 4_000)
                        }
                        try context.save()
                    }
                }
                exit(4)
            } catch let error as StrataError {
                switch error {
                case .storeFull, .io: exit(0)
                default: exit(6)
                }
            } catch {
                exit(5)
            }
        }
        let container = try store.open()
        let context = container.newBackgroundContext()
        let precious = try await context.perform { try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == "Precious" })).count }
        #expect(precious == 1)
    }

    @Test("a store reached through a symlink shares the store; a hard-linked data file is refused", arguments: EngineKind.allCases)
    func linkedStores(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let location = try await Self.makeStore(store)
        let first = try store.open()
        let symlink = store.directory.appendingPathComponent("symlinked")
        try FileManager.default.createSymbolicLink(at: symlink, withDestinationURL: location)
        let viaSymlink = try PersistentContainer(schema: TestModels.schema, engine: kind == .lmdb ? .lmdb(at: symlink) : .sqlite(at: symlink))
        #expect(viaSymlink.storeIdentifier == first.storeIdentifier)
        try await viaSymlink.performUnitOfWork { context in
            Account(context: context).name = "Via symlink"
            try context.save()
        }
        let context = first.newBackgroundContext()
        let count = try await context.perform { try context.count(for: FetchRequest<Account>()) }
        #expect(count == 2)

        let dataFile = kind == .lmdb ? location.appendingPathComponent("data.mdb") : location
        let linkDirectory = store.directory.appendingPathComponent("hard")
        try FileManager.default.createDirectory(at: linkDirectory, withIntermediateDirectories: true)
        let hardLink = linkDirectory.appendingPathComponent(dataFile.lastPathComponent)
        try FileManager.default.linkItem(at: dataFile, to: hardLink)
        let error = #expect(throws: StrataError.self) {
            _ = try PersistentContainer(schema: TestModels.schema, engine: kind == .lmdb ? .lmdb(at: linkDirectory) : .sqlite(at: hardLink))
        }
        guard case .misuse(let message)? = error else {
            Issue.record("expected misuse for a hard-linked store, got \(String(describing: error))")
            return
        }
        #expect(message.contains("hard links"))
    }

    @Test("more concurrent LMDB readers than the reader table holds give busy, not a hang")
    func readerTableFull() throws {
        let store = try TestStore(.lmdb)
        let engine = try EngineConfiguration.lmdb(at: store.configuration.location, options: LMDBOptions(maxReaders: 4)).open(TestModels.schema.storeSchema)
        defer { engine.close() }
        var readers: [any StoreReader] = []
        defer { readers.forEach { $0.close() } }
        var busy = 0
        for _ in 0..<8 {
            do {
                readers.append(try engine.makeReader())
            } catch StrataError.busy {
                busy += 1
            }
        }
        #expect(readers.count >= 1 && readers.count <= 4)
        #expect(busy == 8 - readers.count)
        readers.forEach { $0.close() }
        readers = []
        #expect(throws: Never.self) { readers.append(try engine.makeReader()) }
    }

    @Test("an indexed string longer than the engine's key limit is refused or stored whole, never truncated", arguments: EngineKind.allCases)
    func oversizedIndexedString(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let long = String(repeating: "é", count: 2_000)
        let context = container.newBackgroundContext()
        do {
            try await context.perform {
                Account(context: context).name = long
                try context.save()
            }
            let reader = container.newBackgroundContext()
            let names = try await reader.perform { try reader.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == long })).map(\.name) }
            #expect(names == [long])
        } catch let error as StrataError {
            guard case .validation = error else {
                Issue.record("expected a validation error, got \(error)")
                return
            }
            let reader = container.newBackgroundContext()
            #expect(try await reader.perform { try reader.count(for: FetchRequest<Account>()) } == 0)
        }
    }
}

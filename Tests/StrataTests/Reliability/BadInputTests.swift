import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import StrataTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
    import StrataStorage
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
        // Closed here, not whenever its last reference goes: SQLite's close checkpoints the WAL
        // into the file, which must happen before the caller snapshots it.
        container.close()
        return store.configuration.location
    }

    /// Every regular file of a store with its bytes.
    static func snapshot(_ location: URL) -> [String: Data] {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory)
        let files =
            isDirectory.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(atPath: location.path)) ?? []).map {
                location.appendingPathComponent($0)
            }
            : [location]
        return Dictionary(
            uniqueKeysWithValues: files.filter { $0.lastPathComponent != "lock.mdb" }.map {
                ($0.path, (try? Data(contentsOf: $0)) ?? Data())
            })
    }

    @Test(
        "a read-only directory and read-only store files give typed errors (checked as an unprivileged user)",
        // Not PostgreSQL: its files belong to the server, and a client's rights are its role's, not
        // file permissions.
        arguments: EngineKind.fileEngines)
    func readOnly(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let existing = try await Self.makeStore(store)
        let before = Self.snapshot(existing)
        let emptyDirectory = store.directory.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: emptyDirectory, withIntermediateDirectories: true)
        for path in [store.directory.path, emptyDirectory.path] + Array(before.keys) + [existing.path] {
            let isDirectory =
                (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeDirectory
            try FileManager.default.setAttributes([.posixPermissions: isDirectory ? 0o555 : 0o444], ofItemAtPath: path)
        }
        defer {
            for path in [store.directory.path, emptyDirectory.path, existing.path] + Array(before.keys) {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            }
        }
        let newStore = kind.configuration(in: emptyDirectory).location.path
        let existingStore = existing.path
        // The child reports each outcome on its standard output and exits normally; a crash
        // or a hang fails the exit test itself.
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            [kind = kind as EngineKind, newStore = newStore as String, existingStore = existingStore as String] in
            // Root ignores permission bits: drop to an unprivileged user first.
            if getuid() == 0 {
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(3) }
            }
            for path in [newStore, existingStore] {
                let url = URL(fileURLWithPath: path)
                let engine: EngineConfiguration =
                    kind == .lmdb ? .lmdb(at: url) : .sqlite(at: url)
                let outcome: String
                do {
                    let container = try PersistentContainer(schema: TestModels.schema, engine: engine)
                    try await container.performUnitOfWork { context in
                        Account(context: context).name = "Intruder"
                        try context.save()
                    }
                    outcome = "the write succeeded"
                } catch StrataError.io {
                    // Permission denied is an operating-system failure: check the permissions.
                    outcome = "io"
                } catch {
                    outcome = "expected StrataError.io, got \(String(reflecting: error))"
                }
                FileHandle.standardOutput.write(Data("\(path): \(outcome)\n".utf8))
            }
            exit(0)
        }
        let outcomes = String(decoding: result.standardOutputContent, as: UTF8.self).split(separator: "\n").map(
            String.init)
        #expect(outcomes == ["\(newStore): io", "\(existingStore): io"])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: store.directory.path)
        #expect(Self.snapshot(existing) == before, "the read-only store changed")
    }

    @Test(
        "a file-size limit (a full disk) gives a typed error and the store stays readable",
        // Not PostgreSQL: RLIMIT_FSIZE limits the client process, and the server writes the files.
        arguments: EngineKind.fileEngines)
    func fileSizeLimit(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let location = try await Self.makeStore(store)
        let path = location.path
        // The child reports its outcome on its standard output and exits normally; a crash
        // fails the exit test itself.
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            [kind = kind as EngineKind, path = path as String] in
            signal(SIGXFSZ, SIG_IGN)
            var limit = rlimit(rlim_cur: 4 << 20, rlim_max: 4 << 20)
            guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { exit(3) }
            let url = URL(fileURLWithPath: path)
            let engine: EngineConfiguration =
                kind == .lmdb ? .lmdb(at: url) : .sqlite(at: url)
            let outcome: String
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
                outcome = "40 batches of about 200 kB were all saved under a 4 MB file-size limit"
            } catch StrataError.storeFull {
                // A file that may not grow is a full store: free space or raise the limit.
                outcome = "storeFull"
            } catch {
                outcome = "expected StrataError.storeFull, got \(String(reflecting: error))"
            }
            FileHandle.standardOutput.write(Data(outcome.utf8))
            exit(0)
        }
        let outcome = String(decoding: result.standardOutputContent, as: UTF8.self)
        // SQLite reports the refused write as SQLITE_IOERR_WRITE and LMDB as EIO (a short
        // pwrite); both must come out as `.storeFull`.
        #expect(outcome == "storeFull", "\(kind)")
        let container = try store.open()
        let context = container.newBackgroundContext()
        let precious = try await context.perform {
            try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == "Precious" })).count
        }
        #expect(precious == 1)
    }

    @Test(
        "a store reached through a symlink shares the store; a hard-linked data file is refused",
        // Not PostgreSQL: a server store has no file to link.
        arguments: EngineKind.fileEngines)
    func linkedStores(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let location = try await Self.makeStore(store)
        let first = try store.open()
        let symlink = store.directory.appendingPathComponent("symlinked")
        try FileManager.default.createSymbolicLink(at: symlink, withDestinationURL: location)
        let viaSymlink = try PersistentContainer(
            schema: TestModels.schema, engine: kind == .lmdb ? .lmdb(at: symlink) : .sqlite(at: symlink))
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
            _ = try PersistentContainer(
                schema: TestModels.schema, engine: kind == .lmdb ? .lmdb(at: linkDirectory) : .sqlite(at: hardLink))
        }
        guard case .misuse(let message, _)? = error else {
            Issue.record("expected misuse for a hard-linked store, got \(String(describing: error))")
            return
        }
        #expect(message.contains("hard links"))
    }

    @Test("more concurrent LMDB readers than the reader table holds give busy, not a hang")
    func readerTableFull() throws {
        let store = try TestStore(.lmdb)
        let engine = try EngineConfiguration.lmdb(at: store.configuration.location, options: LMDBOptions(maxReaders: 4))
            .open(TestModels.schema.storeSchema)
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
        // The engine itself holds no reader slot: all four are the caller's.
        #expect(readers.count == 4)
        #expect(busy == 4)
        readers.forEach { $0.close() }
        readers = []
        #expect(throws: Never.self) { readers.append(try engine.makeReader()) }
    }

    /// Saves one account named `name` in a fresh context; what the save gave, and the names of
    /// every stored account afterwards, read in another.
    static func saveAccount(
        named name: String, in container: PersistentContainer
    ) async throws -> (saved: Result<Void, any Error>, names: [String]) {
        let context = container.newBackgroundContext()
        let saved: Result<Void, any Error>
        do {
            try await context.perform {
                Account(context: context).name = name
                try context.save()
            }
            saved = .success(())
        } catch {
            saved = .failure(error)
        }
        let reader = container.newBackgroundContext()
        let names = try await reader.perform { try reader.fetch(FetchRequest<Account>()).map(\.name) }
        return (saved, names)
    }

    /// SQLite has no key-size limit, so it stores the string whole; LMDB's keys hold at most
    /// 511 bytes, so it refuses the save with `.validation` and writes nothing. PostgreSQL's
    /// btree entries hold about 2,700 bytes after compression: this repetitive 4,000-byte string
    /// compresses far below that and is stored whole, and a value that did not fit would be
    /// refused with a typed error (SQLSTATE 54000), writing nothing. The in-memory engine's indexes
    /// hold values of any length: it stores the string whole. Never truncated.
    @Test(
        "an indexed string longer than LMDB's key limit is stored whole on SQLite and refused with validation on LMDB",
        arguments: EngineKind.allCases)
    func oversizedIndexedString(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let long = String(repeating: "é", count: 2_000)
        let (saved, names) = try await Self.saveAccount(named: long, in: container)
        switch kind {
        case .sqlite, .postgres, .memory:
            #expect(throws: Never.self) { try saved.get() }
            #expect(names == [long], "\(kind) must store the 4,000-byte string whole")
        case .lmdb:
            guard case .failure(StrataError.validation(let issues)) = saved else {
                Issue.record("LMDB: expected StrataError.validation for a 4,000-byte indexed string, got \(saved)")
                return
            }
            #expect(issues.map(\.property) == ["name"], "\(issues)")
            #expect(
                names.isEmpty, "LMDB wrote something although the save was refused: \(names.map(\.utf8.count)) bytes")
        }
    }

    /// An 8,000-byte string that does not compress (random hex digits): SQLite and the in-memory
    /// engine (no key size limit) store it whole;
    /// LMDB (keys of at most 511 bytes) and PostgreSQL (B-tree entries of about 2,700 bytes after
    /// compression) refuse the save with `.validation` naming the attribute, and write nothing.
    @Test(
        "an incompressible 8,000-byte indexed string is stored whole on SQLite and refused with validation elsewhere",
        arguments: EngineKind.allCases)
    func incompressibleIndexedString(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        var random = SeededGenerator(seed: 8_000)
        let long = String((0..<8_000).map { _ in "0123456789abcdef".randomElement(using: &random)! })
        let (saved, names) = try await Self.saveAccount(named: long, in: container)
        switch kind {
        case .sqlite, .memory:
            #expect(throws: Never.self) { try saved.get() }
            #expect(names == [long], "\(kind) must store the 8,000-byte string whole")
        case .lmdb, .postgres:
            guard case .failure(StrataError.validation(let issues)) = saved else {
                Issue.record("\(kind): expected StrataError.validation for an 8,000-byte indexed string, got \(saved)")
                return
            }
            #expect(issues.map(\.entity) == ["Account"] && issues.map(\.property) == ["name"], "\(issues)")
            let advice = issues.first?.message.lowercased().contains("shorten the value or drop the index")
            #expect(advice == true, "\(issues)")
            #expect(names.isEmpty, "\(kind) wrote something although the save was refused")
        }
    }
}

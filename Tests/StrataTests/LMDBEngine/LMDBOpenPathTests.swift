import Foundation
import Glibc
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// The LMDB engine's open and creation path against what a file system can hold at a store's
/// path: FIFOs, missing parents, a sparse lock file, a creation that fails half way.
@Suite("LMDB opening and creating a store")
struct LMDBOpenPathTests {
    /// The bytes of disk the file at `path` has allocated (`st_blocks` × 512).
    static func allocatedBytes(_ path: String) throws -> Int {
        var info = stat()
        try #require(stat(path, &info) == 0, "stat \(path)")
        return Int(info.st_blocks) * 512
    }

    static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    /// A new, existing, empty directory.
    static func emptyDirectory(_ function: String = #function) throws -> URL {
        let directory = LMDBFixture.directory(function)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a new store's lock.mdb has the size LMDB gives it, every byte allocated")
    func newLockFileAllocated() throws {
        for readers in [126, 1024] {
            let directory = LMDBFixture.directory()
            let engine = try LMDBFixture.open(directory, options: LMDBOptions(maxReaders: readers))
            defer { engine.close() }
            let lock = directory.appendingPathComponent("lock.mdb").path
            // LMDB did not resize what Strata reserved: the sizes agree (65,664 bytes for 1,024).
            #expect(Self.fileSize(lock) == LMDBLockFile.size(maxReaders: readers), "maxReaders \(readers)")
            #expect(try Self.allocatedBytes(lock) >= LMDBLockFile.size(maxReaders: readers), "maxReaders \(readers)")
        }
        #expect(LMDBLockFile.size(maxReaders: 1024) == 65_664)
    }

    @Test("a sparse lock.mdb left from before is allocated at open, a larger one keeps its size")
    func sparseLockFileAllocated() throws {
        for size in [65_664, 4 * 65_664] {
            let directory = try Self.emptyDirectory()
            let lock = directory.appendingPathComponent("lock.mdb")
            try #require(FileManager.default.createFile(atPath: lock.path, contents: nil))
            let handle = try FileHandle(forWritingTo: lock)
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()
            #expect(try Self.allocatedBytes(lock.path) < size, "the file system did not make a sparse file")
            let engine = try LMDBFixture.open(directory)
            defer { engine.close() }
            #expect(Self.fileSize(lock.path) == size)
            #expect(try Self.allocatedBytes(lock.path) >= size, "lock.mdb of \(size) bytes is still sparse")
        }
    }

    /// Runs `open` on a thread of its own and waits at most 20 s for it: a hang is recorded as an
    /// issue (and `fifo` is then opened and closed for writing until `open` returns, which
    /// releases an `open` or a `read` waiting for a writer).
    static func withoutHanging(fifo: String, _ open: @escaping @Sendable () -> StrataError?) -> StrataError? {
        let done = DispatchSemaphore(value: 0)
        let result = LockedBox<StrataError?>(nil)
        Thread.detachNewThread {
            result.set(open())
            done.signal()
        }
        if done.wait(timeout: .now() + 20) == .timedOut {
            Issue.record("opening a store at or over a FIFO hung (released after 20 s)")
            // A writer that comes and goes wakes an `open` for reading, and its reads then end.
            repeat {
                let writer = Glibc.open(fifo, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { Glibc.close(writer) }
            } while done.wait(timeout: .now() + 1) == .timedOut
        }
        return result.get()
    }

    @Test("a FIFO as the store path, or as its data.mdb, is refused with .notAStore, without hanging")
    func fifo() throws {
        let parent = try Self.emptyDirectory()
        let fifo = parent.appendingPathComponent("fifo").path
        try #require(mkfifo(fifo, 0o644) == 0)
        let atPath = Self.withoutHanging(fifo: fifo) {
            LMDBFixture.strataError { _ = try LMDBFixture.open(URL(fileURLWithPath: fifo)) }
        }
        guard case .notAStore(let path, let reason, _)? = atPath else {
            Issue.record("expected .notAStore, got \(String(describing: atPath))")
            return
        }
        #expect(path == fifo && reason.contains("FIFO"), "\(reason)")
        let inspected = Self.withoutHanging(fifo: fifo) {
            LMDBFixture.strataError {
                _ = try EngineConfiguration.lmdbInspection(at: URL(fileURLWithPath: fifo)).readRecord()
            }
        }
        guard case .notAStore(_, let reason, _)? = inspected else {
            Issue.record("inspection: expected .notAStore, got \(String(describing: inspected))")
            return
        }
        #expect(reason.contains("FIFO"), "\(reason)")

        let directory = try Self.emptyDirectory()
        let dataFIFO = directory.appendingPathComponent("data.mdb").path
        try #require(mkfifo(dataFIFO, 0o644) == 0)
        let overData = Self.withoutHanging(fifo: dataFIFO) {
            LMDBFixture.strataError { _ = try LMDBFixture.open(directory) }
        }
        guard case .notAStore(_, let reason, _)? = overData else {
            Issue.record("data.mdb FIFO: expected .notAStore, got \(String(describing: overData))")
            return
        }
        #expect(reason.contains("data.mdb") && reason.contains("FIFO"), "\(reason)")
    }

    @Test("a store whose parent directory is missing, or is a file, is refused with .io and nothing is created")
    func missingParent() throws {
        let base = try Self.emptyDirectory()
        let missing = base.appendingPathComponent("missing/parent/s.lmdb")
        let error = LMDBFixture.strataError { _ = try LMDBFixture.open(missing) }
        guard case .io(let detail, _)? = error else {
            Issue.record("expected .io, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("does not exist") && detail.contains("check that the directory exists"), "\(detail)")
        #expect(!FileManager.default.fileExists(atPath: base.appendingPathComponent("missing").path))

        let file = base.appendingPathComponent("plain")
        try Data("x".utf8).write(to: file)
        let underFile = LMDBFixture.strataError { _ = try LMDBFixture.open(file.appendingPathComponent("s.lmdb")) }
        guard case .io(let detail, _)? = underFile else {
            Issue.record("expected .io, got \(String(describing: underFile))")
            return
        }
        #expect(detail.contains("is a regular file, not a directory") && !detail.contains("NSCocoa"), "\(detail)")

        // The store's own directory is still created.
        let engine = try LMDBFixture.open(base.appendingPathComponent("s.lmdb"))
        engine.close()
    }

    /// A schema LMDB refuses in the opening transaction, after `mdb_env_open` made `data.mdb`:
    /// its entity's database name is longer than LMDB's largest key (511 bytes).
    static func refusedSchema() -> StoreSchema {
        let name = "E" + String(repeating: "n", count: 600)
        let columns = [ColumnSchema(name: "c", type: .string, isOptional: true)]
        return StoreSchema(
            version: 1, entities: [EntitySchema(name: name, number: 0, columns: columns, indexes: [])], joins: [])
    }

    static func openRefused(_ directory: URL) throws {
        try EngineConfiguration.lmdb(at: directory).open(refusedSchema()).close()
    }

    @Test("a creation that fails leaves nothing behind, and a retry creates the store")
    func failedCreationUndone() throws {
        // This call creates the directory: it is removed.
        let fresh = LMDBFixture.directory()
        let error = LMDBFixture.strataError { try Self.openRefused(fresh) }
        #expect(error != nil)
        #expect(!FileManager.default.fileExists(atPath: fresh.path), "the failed creation left \(fresh.path)")
        // The directory existed: it stays, holding only the open lock's file.
        let existing = try Self.emptyDirectory()
        let again = LMDBFixture.strataError { try Self.openRefused(existing) }
        #expect(again != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: existing.path) == [LMDBFileLock.openLockName])
        // A retry (here with a schema LMDB takes) creates the store.
        for directory in [fresh, existing] { try LMDBFixture.open(directory).close() }
    }

    @Test("a failed open of an existing store deletes none of its files")
    func failedOpenOfExistingStoreKeepsFiles() throws {
        let directory = LMDBFixture.directory()
        try LMDBFixture.open(directory).close()
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let error = LMDBFixture.strataError { try Self.openRefused(directory) }
        #expect(error != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        try LMDBFixture.open(directory).close()
    }
}

/// A value shared between a test and the thread it starts.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
}

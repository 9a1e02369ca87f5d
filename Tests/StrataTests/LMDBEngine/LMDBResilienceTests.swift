import Foundation
import Strata
import StrataStorage
import Synchronization
import Testing

@testable import StrataLMDB

@Suite("LMDB map growth and concurrency")
struct LMDBResilienceTests {
    static func blobRow(_ key: Int64, bytes: Int) -> RowWrite {
        RowWrite(
            entity: LMDBFixture.sample, key: key, expectedVersion: 0,
            values: [.integer(key), .null, .null, .blob(Data(repeating: UInt8(key & 0xFF), count: bytes)), .null])
    }

    @Test("a tiny map grows until the data fits")
    func mapGrowth() throws {
        let directory = LMDBFixture.directory()
        let engine = try LMDBFixture.open(directory, options: LMDBOptions(initialMapSize: 1 << 20))
        defer { engine.close() }
        for key in Int64(1)...24 {
            var changes = ChangeSet()
            changes.inserts = [Self.blobRow(key, bytes: 256 << 10)]
            try engine.commit(changes)
        }
        var big = ChangeSet()
        big.inserts = (Int64(100)..<Int64(104)).map { Self.blobRow($0, bytes: 1 << 20) }
        try engine.commit(big)
        #expect(try LMDBFixture.allRows(engine, LMDBFixture.sample).count == 28)
        let lmdb = try #require(engine as? LMDBEngine)
        #expect(lmdb.environment.mapSize > 8 << 20)
    }

    @Test("the map grows while 4 threads keep reading: every read is whole and nothing hangs (watchdog: 120 s)")
    func growthUnderReads() async throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory(), options: LMDBOptions(initialMapSize: 1 << 20))
        defer { engine.close() }
        let writing = Atomic<Bool>(true)
        let reads = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let readers = (0..<4).map { _ in
            Thread {
                var lastCount = 0
                while writing.load(ordering: .acquiring) {
                    do {
                        let reader = try engine.makeReader()
                        defer { reader.close() }
                        let count = try reader.count(entity: LMDBFixture.sample, filter: nil)
                        var streamed = 0
                        try reader.forEachRow(for: FetchPlan(entity: LMDBFixture.sample)) { row in
                            if case .blob(let data) = row.values[3], data.count != 256 << 10 {
                                throw StrataError.storeCorrupt("short blob")
                            }
                            streamed += 1
                        }
                        if streamed != count || count < lastCount {
                            failures.withLock {
                                $0.append("count \(count), streamed \(streamed), previous \(lastCount)")
                            }
                        }
                        lastCount = count
                        reads.wrappingAdd(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        readers.forEach { $0.start() }
        let deadline = ContinuousClock.now + .seconds(120)
        for key in Int64(1)...24 where ContinuousClock.now < deadline {
            var changes = ChangeSet()
            changes.inserts = [Self.blobRow(key, bytes: 256 << 10)]
            try engine.commit(changes)
            try await Task.sleep(for: .milliseconds(2))
        }
        writing.store(false, ordering: .releasing)
        // The readers get a budget of their own to finish their last read, whatever the writes took.
        let readersDeadline = ContinuousClock.now + .seconds(60)
        while readers.contains(where: { !$0.isFinished }), ContinuousClock.now < readersDeadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let finished = readers.allSatisfy { $0.isFinished }
        let failed = failures.withLock { $0 }
        #expect(finished, "a reader is stuck behind the map growth")
        #expect(failed == [])
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(try LMDBFixture.allRows(engine, LMDBFixture.sample).count == 24)
        let lmdb = try #require(engine as? LMDBEngine)
        #expect(lmdb.environment.mapSize > 4 << 20, "the map did not grow, so the test did not exercise a resize")
    }

    @Test("past the maximum map size a commit fails with .storeFull and the store stays usable")
    func storeFull() throws {
        let engine = try LMDBFixture.open(
            LMDBFixture.directory(), options: LMDBOptions(initialMapSize: 1 << 20, maximumMapSize: 2 << 20))
        defer { engine.close() }
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("before"), .integer(1), .null])
        var huge = ChangeSet()
        huge.inserts = (Int64(1)...4).map { Self.blobRow($0, bytes: 1 << 20) }
        let error = LMDBFixture.strataError { try engine.commit(huge) }
        guard case .storeFull(_, let native) = error else {
            Issue.record("expected .storeFull, got \(String(describing: error))")
            return
        }
        // The cause is LMDB's MDB_MAP_FULL, from the put or the commit that no longer fit.
        #expect(native?.engine == "lmdb" && native?.code == -30792, "\(String(describing: error))")
        #expect(["mdb_put", "mdb_txn_commit"].contains(native?.operation ?? ""), "\(String(describing: native))")
        #expect(error?.description.contains("lmdb code -30792") == true, "\(String(describing: error))")
        // The map's limit is full, not the disk: the advice is to raise it (or delete data).
        let description = error?.description ?? ""
        #expect(description.contains("Open the store with a larger maximumMapSize, or delete data"), "\(description)")
        #expect(!description.contains("Free disk space") && !description.contains("growth(s)"), "\(description)")
        #expect(try LMDBFixture.allRows(engine, LMDBFixture.sample).isEmpty)
        try LMDBFixture.insert(engine, LMDBFixture.account, 2, [.text("after"), .integer(2), .null])
        #expect(try LMDBFixture.allRows(engine, LMDBFixture.account).map(\.key) == [1, 2])
    }

    @Test("2,000 commits from 8 concurrent tasks all finish (watchdog: 120 s)")
    func concurrentCommits() async throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory(), options: LMDBOptions(initialMapSize: 1 << 20))
        defer { engine.close() }
        let finished = Mutex(false)
        let executor = BlockingWorkExecutor()
        let work = Task(executorPreference: executor) {
            defer { finished.withLock { $0 = true } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for step in 0..<250 {
                            let key = try engine.allocateKeys(entity: LMDBFixture.txn, count: 1).lowerBound
                            var changes = ChangeSet()
                            changes.inserts = [
                                RowWrite(
                                    entity: LMDBFixture.txn, key: key, expectedVersion: 0,
                                    values: [.integer(Int64(worker * 1000 + step)), .null])
                            ]
                            try engine.commit(changes)
                            if step % 25 == 0 {
                                let reader = try engine.makeReader()
                                _ = try reader.count(entity: LMDBFixture.txn, filter: nil)
                                reader.close()
                            }
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while !finished.withLock({ $0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let done = finished.withLock { $0 }
        #expect(done, "the 2,000 commits did not finish within 120 s: a writer is stuck")
        guard done else { return }
        try await work.value
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.count(entity: LMDBFixture.txn, filter: nil) == 2000)
    }

    @Test("one store opened twice, also through a symlink, shares one environment")
    func sharedEnvironment() throws {
        let directory = LMDBFixture.directory()
        let first = try LMDBFixture.open(directory)
        let link = directory.deletingLastPathComponent().appendingPathComponent("link-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory)
        defer { try? FileManager.default.removeItem(at: link) }
        let second = try LMDBFixture.open(link)
        let third = try LMDBFixture.open(URL(fileURLWithPath: directory.path + "/./"))
        let a = try #require(first as? LMDBEngine)
        let b = try #require(second as? LMDBEngine)
        let c = try #require(third as? LMDBEngine)
        #expect(a.environment === b.environment)
        #expect(a.environment === c.environment)
        #expect(first.storeIdentifier == second.storeIdentifier)
        try LMDBFixture.insert(first, 0, 1, [.text("one"), .integer(1), .null])
        try LMDBFixture.insert(second, 0, 2, [.text("two"), .integer(2), .null])
        let keys = try first.allocateKeys(entity: 0, count: 3)
        let more = try second.allocateKeys(entity: 0, count: 3)
        #expect(!keys.overlaps(more))
        first.close()
        #expect(try LMDBFixture.allRows(second, 0).map(\.key) == [1, 2])
        second.close()
        #expect(try LMDBFixture.allRows(third, 0).count == 2)
        third.close()
        let reopened = try LMDBFixture.open(link)
        #expect(try LMDBFixture.allRows(reopened, 0).count == 2)
        reopened.close()
    }
}

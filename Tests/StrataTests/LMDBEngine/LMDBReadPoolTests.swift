import CLMDB
import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// Read transactions are reset into a small idle pool and renewed: a renewed snapshot must be
/// the latest one, an open snapshot must stay put, and reader slots must not pile up.
@Suite("LMDB read transaction pool")
struct LMDBReadPoolTests {
    @Test("every new reader sees the latest commit, while an older reader keeps its snapshot")
    func renewedSnapshotsAreCurrent() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let held = try engine.makeReader()
        defer { held.close() }
        #expect(try held.count(entity: LMDBFixture.account, filter: nil) == 0)
        for key in Int64(1)...200 {
            try LMDBFixture.insert(engine, LMDBFixture.account, key, [.text("a\(key)"), .integer(key), .null])
            let reader = try engine.makeReader()
            let count = try reader.count(entity: LMDBFixture.account, filter: nil)
            let row = try reader.row(entity: LMDBFixture.account, key: key)
            reader.close()
            #expect(count == Int(key))
            #expect(row?.values[1] == .integer(key))
        }
        #expect(try held.count(entity: LMDBFixture.account, filter: nil) == 0)
    }

    @Test("reader slots stay few however many readers come and go")
    func readerSlotsAreReused() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("a"), .integer(1), .null])
        for round in 0..<300 {
            // Up to four readers open at once, closed in a different order than opened.
            let readers = try (0...(round % 4)).map { _ in try engine.makeReader() }
            for reader in readers.reversed() {
                #expect(try reader.count(entity: LMDBFixture.account, filter: nil) == 1)
                reader.close()
            }
        }
        let lmdb = try #require(engine as? LMDBEngine)
        var info = MDB_envinfo()
        #expect(mdb_env_info(lmdb.environment.raw, &info) == 0)
        // The slots ever used: the four open at once plus the idle pool, never one per reader.
        #expect(info.me_numreaders <= 12)
    }

    @Test(
        """
        with more readers open than the pool keeps, the extra transactions are ended, not pooled; with no read in \
        flight one is kept, then released unused
        """
    )
    func poolOverflow() async throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("a"), .integer(1), .null])
        let lmdb = try #require(engine as? LMDBEngine)
        for _ in 0..<20 {
            let readers = try (0..<20).map { _ in try engine.makeReader() }
            for reader in readers.dropLast() {
                #expect(try reader.count(entity: LMDBFixture.account, filter: nil) == 1)
                reader.close()
            }
            // While a read is in flight the pool keeps ended transactions, at most 8.
            #expect(lmdb.environment.idleReadCount <= 8)
            #expect(lmdb.environment.idleReadCount > 0)
            // The last read in flight ends all but one, kept for the process's next read.
            readers.last?.close()
            #expect(lmdb.environment.idleReadCount == 1)
        }
        // Unused, the kept one is ended after LMDBEnvironment.idleReadRelease (100 ms): an idle
        // process holds no reader slot. (Waits up to 30 s, so a pool that never lets go fails.) The
        // wait suspends instead of sleeping: the release runs on a global dispatch queue, and a
        // test thread blocked while it polls keeps one of the few workers of a 2-core machine
        // from running it (a clean CI run of 7 December saw the read still held at 10 s).
        let deadline = ContinuousClock.now + .seconds(30)
        while lmdb.environment.idleReadCount > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(lmdb.environment.idleReadCount == 0)
        var info = MDB_envinfo()
        #expect(mdb_env_info(lmdb.environment.raw, &info) == 0)
        #expect(info.me_numreaders <= 28)
    }

    @Test("with a reader table too small for a pool (maxReaders below 8), an ended read keeps no slot")
    func noPoolForSmallTables() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory(), options: LMDBOptions(maxReaders: 4))
        defer { engine.close() }
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("a"), .integer(1), .null])
        let lmdb = try #require(engine as? LMDBEngine)
        let reader = try engine.makeReader()
        #expect(try reader.count(entity: LMDBFixture.account, filter: nil) == 1)
        reader.close()
        #expect(lmdb.environment.idleReadCount == 0)
    }

    @Test("closing the last engine closes the environment with its idle transactions; reopening works")
    func closeAndReopen() throws {
        let directory = LMDBFixture.directory()
        for round in Int64(1)...5 {
            let engine = try LMDBFixture.open(directory)
            for _ in 0..<10 {
                let reader = try engine.makeReader()
                #expect(try reader.count(entity: LMDBFixture.account, filter: nil) == Int(round - 1))
                reader.close()
            }
            try LMDBFixture.insert(engine, LMDBFixture.account, round, [.text("a\(round)"), .integer(round), .null])
            engine.close()
        }
        let engine = try LMDBFixture.open(directory)
        defer { engine.close() }
        #expect(try LMDBFixture.allRows(engine, LMDBFixture.account).count == 5)
    }
}

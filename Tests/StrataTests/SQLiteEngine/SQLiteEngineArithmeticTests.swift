import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

/// Numbers a caller or the store hands the SQLite engine — offsets, limits, key counts, keys and
/// versions at the ends of their range — give the right answer or a typed error, never a trap.
@Suite("SQLiteEngine arithmetic on given numbers")
struct SQLiteEngineArithmeticTests {
    static let limits: [Int?] = [nil, Int.min, -1, 0, 1, 4, 10, Int.max - 1, Int.max]
    static let offsets: [Int] = [Int.min, -1, 0, 1, 3, 9, 10, 11, Int.max - 1, Int.max]

    /// The rows `limit` and `offset` select from `count` rows, computed without any sum that
    /// can overflow.
    static func window(count: Int, limit: Int?, offset: Int) -> Range<Int> {
        let start = min(max(offset, 0), count)
        let available = count - start
        let taken = limit.map { min(max($0, 0), available) } ?? available
        return start..<(start + taken)
    }

    @Test("every limit and offset, at the ends of Int, selects the right window", arguments: limits)
    func extremeWindows(limit: Int?) throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(
            Fixtures.inserts((1...10).map { Fixtures.account(Int64($0), "a\($0)", balance: Int64(100 - $0)) }))
        let reader = try engine.makeReader()
        defer { reader.close() }
        // Sorted by balance descending: keys 1...10 in order.
        for offset in Self.offsets {
            let plan = FetchPlan(
                entity: Fixtures.account, filter: .compare(column: 1, .greaterThan, .integer(0)),
                sort: [SortKey(column: 1, ascending: false)], limit: limit, offset: offset)
            let expected = Self.window(count: 10, limit: limit, offset: offset).map { Int64($0 + 1) }
            #expect(
                try reader.rows(for: plan).map(\.key) == expected, "limit \(String(describing: limit)) offset \(offset)"
            )
            var streamed: [Int64] = []
            try reader.forEachRow(for: plan) { streamed.append($0.key) }
            #expect(streamed == expected, "streamed, limit \(String(describing: limit)) offset \(offset)")
        }
    }

    @Test func keysAtTheTopOfTheRangeEndInStoreFullNotATrap() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        // A row stored with the highest key (the engine accepts any positive key).
        try engine.commit(Fixtures.inserts([Fixtures.account(Int64.max, "Top")]))
        #expect(try allRows(engine, Fixtures.account).map(\.key) == [Int64.max])
        guard
            case .storeFull(let message, _) = strataError({
                _ = try engine.allocateKeys(entity: Fixtures.account, count: 1)
            })
        else {
            Issue.record("allocating past the highest key did not give storeFull")
            return
        }
        #expect(message.contains("Account") && message.contains("\(Int64.max)"))
        // Another entity is unaffected.
        #expect(try engine.allocateKeys(entity: Fixtures.txn, count: 3) == 1..<4)
    }

    @Test("huge and negative key counts are typed errors; the allocator keeps working")
    func hugeKeyCounts() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        #expect(try engine.allocateKeys(entity: Fixtures.account, count: 2) == 1..<3)
        for count in [Int.max, Int.max - 1, Int(Int64.max - 200)] {
            guard case .storeFull = strataError({ _ = try engine.allocateKeys(entity: Fixtures.account, count: count) })
            else {
                Issue.record("allocateKeys(count: \(count)) did not give storeFull")
                continue
            }
        }
        guard case .misuse = strataError({ _ = try engine.allocateKeys(entity: Fixtures.account, count: Int.min) })
        else {
            Issue.record("a negative count was accepted")
            return
        }
        #expect(try engine.allocateKeys(entity: Fixtures.account, count: 0).isEmpty)
        #expect(try engine.allocateKeys(entity: Fixtures.account, count: 1) == 3..<4)
        // A reservation just under the top still fits.
        let big = try engine.allocateKeys(entity: Fixtures.txn, count: Int(Int64.max - 2))
        #expect(big == 1..<(Int64.max - 1))
    }

    @Test func anUpdateExpectingTheHighestVersionIsAConflictNotATrap() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "A", balance: 5)]))
        var changes = ChangeSet()
        changes.updates = [Fixtures.account(1, "A", balance: 6, version: Int64.max)]
        guard case .conflict(let conflicts) = strataError({ try engine.commit(changes) }) else {
            Issue.record("an update expecting version Int64.max was not a conflict")
            return
        }
        #expect(conflicts.map(\.expectedVersion) == [Int64.max] && conflicts.map(\.storedVersion) == [1])
        var touch = ChangeSet()
        touch.touches = [RowVersionCheck(entity: Fixtures.account, key: 1, expectedVersion: Int64.max)]
        guard case .conflict = strataError({ try engine.commit(touch) }) else {
            Issue.record("a touch expecting version Int64.max was not a conflict")
            return
        }
        #expect(try allRows(engine, Fixtures.account).map(\.values[1]) == [.integer(5)])
    }

    @Test func aRowAtTheHighestVersionCannotBeIncrementedButStaysReadable() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "A", balance: 5)]))
        try RawSQLite(path: store.path).execute("UPDATE Account SET version = 9223372036854775807 WHERE id = 1")
        var changes = ChangeSet()
        changes.updates = [Fixtures.account(1, "A", balance: 6, version: Int64.max)]
        guard case .storeFull = strataError({ try engine.commit(changes) }) else {
            Issue.record("updating a row at version Int64.max did not give storeFull")
            return
        }
        var touch = ChangeSet()
        touch.touches = [RowVersionCheck(entity: Fixtures.account, key: 1, expectedVersion: Int64.max)]
        guard case .conflict = strataError({ try engine.commit(touch) }) else {
            Issue.record("touching a row at version Int64.max was not refused")
            return
        }
        // SQLite would have turned Int64.max + 1 into a REAL.
        #expect(try RawSQLite(path: store.path).strings("SELECT typeof(version) FROM Account") == ["integer"])
        let rows = try allRows(engine, Fixtures.account)
        #expect(rows.map(\.version) == [Int64.max] && rows.map(\.values[1]) == [.integer(5)])
    }
}

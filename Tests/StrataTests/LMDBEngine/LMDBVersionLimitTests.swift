import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// A row stored at the highest version cannot take another change: the commit fails with a
/// typed error and writes nothing, instead of trapping on `Int64.max + 1`.
@Suite("LMDB version limit")
struct LMDBVersionLimitTests {
    @Test("updating or touching a row stored at version Int64.max gives storeFull, not a trap")
    func versionAtMaximum() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let lmdb = try #require(engine as? LMDBEngine)
        let values: ContiguousArray<StoredValue> = [.text("max"), .integer(1), .null]
        let dbi = lmdb.catalog.entities[LMDBFixture.account].dbi
        try lmdb.environment.write("test") { txn in
            try txn.put(dbi, primaryKey: 7, RowCodec.encode(version: .max, values: values))
        }
        var update = ChangeSet()
        update.updates = [
            RowWrite(
                entity: LMDBFixture.account, key: 7, expectedVersion: .max,
                values: [.text("changed"), .integer(2), .null])
        ]
        var touch = ChangeSet()
        touch.touches = [RowVersionCheck(entity: LMDBFixture.account, key: 7, expectedVersion: .max)]
        for changes in [update, touch] {
            let error = LMDBFixture.strataError { try engine.commit(changes) }
            guard case .storeFull(let message, _)? = error else {
                Issue.record("expected storeFull, got \(String(describing: error))")
                continue
            }
            #expect(message.contains("highest version"))
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.row(entity: LMDBFixture.account, key: 7) == StoredRow(key: 7, version: .max, values: values))
    }
}

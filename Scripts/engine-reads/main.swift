// Engine-level micro-check for issue 16 (run by Scripts/count-engine-reads.sh): the reads faults,
// batch faults and prefetching make. 1,000 accounts with 10 rows each (10,000 rows), every account
// linked to 10 rows. Each measured function runs 3 times.
import Foundation
import StrataLMDB
import StrataSQLite
import StrataStorage

let schema = StoreSchema(
    version: 1,
    entities: [
        EntitySchema(
            name: "Account", number: 0, columns: [ColumnSchema(name: "name", type: .string, isOptional: false)],
            indexes: []),
        EntitySchema(
            name: "Row", number: 1,
            columns: [
                ColumnSchema(name: "amount", type: .int64, isOptional: false),
                ColumnSchema(name: "memo", type: .string, isOptional: false),
                ColumnSchema(name: "account", type: .reference, isOptional: true, referencedEntity: 0),
            ],
            indexes: [IndexSchema(name: "Row_account", columns: [2], isUnique: false)]),
    ],
    joins: [JoinSchema(name: "Account_tags", number: 0, leftEntity: 0, rightEntity: 1)])

let owners: [Int64] = Array(1...1000)
nonisolated(unsafe) var sink = 0

@inline(never) nonisolated func microEquality(_ r: any StoreReader) throws {
    for owner in owners {
        try r.forEachRow(for: FetchPlan(entity: 1, filter: .compare(column: 2, .equal, .integer(owner)))) {
            sink &+= Int($0.key)
        }
    }
}
@inline(never) nonisolated func microMembership(_ r: any StoreReader) throws {
    try r.forEachRow(for: FetchPlan(entity: 1, filter: .isIn(column: 2, values: owners.map { .integer($0) }))) {
        sink &+= Int($0.key)
    }
}
@inline(never) nonisolated func microMembershipAnyOrder(_ r: any StoreReader) throws {
    let plan = FetchPlan(entity: 1, filter: .isIn(column: 2, values: owners.map { .integer($0) }), inKeyOrder: false)
    try r.forEachRow(for: plan) { sink &+= Int($0.key) }
}
// The general path for the same rows: an AND with `true` is no SQLite shape (the IN list is bound
// parameter by parameter) and no exact LMDB scan (the evaluator checks every candidate).
@inline(never) nonisolated func microMembershipGeneral(_ r: any StoreReader) throws {
    try r.forEachRow(
        for: FetchPlan(entity: 1, filter: .and([.isIn(column: 2, values: owners.map { .integer($0) }), .constant(true)]))
    ) { sink &+= Int($0.key) }
}
@inline(never) nonisolated func microNotNull(_ r: any StoreReader) throws {
    try r.forEachRow(for: FetchPlan(entity: 1, filter: .isNotNull(column: 2))) { sink &+= Int($0.key) }
}
@inline(never) nonisolated func microFetchAll(_ r: any StoreReader) throws {
    try r.forEachRow(for: FetchPlan(entity: 1)) { sink &+= Int($0.key) }
}
@inline(never) nonisolated func microLinks(_ r: any StoreReader) throws {
    try r.forEachLink(join: 0, from: .left, keys: owners) { sink &+= Int($0 &+ $1) }
}
@inline(never) nonisolated func microLinksPerKey(_ r: any StoreReader) throws {
    for owner in owners { for linked in try r.linkedKeys(join: 0, from: .left, key: owner) { sink &+= Int(owner &+ linked) } }
}

let kind = CommandLine.arguments[1]
let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("i16e-micro-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let configuration: EngineConfiguration =
    kind == "lmdb" ? .lmdb(at: directory.appendingPathComponent("s.lmdb")) : .sqlite(at: directory.appendingPathComponent("s.sqlite"))
let engine = try configuration.open(schema)
var changes = ChangeSet()
changes.inserts = owners.map { RowWrite(entity: 0, key: $0, expectedVersion: 0, values: [.text("account \($0)")]) }
for key in Int64(1)...10_000 {
    changes.inserts.append(RowWrite(entity: 1, key: key, expectedVersion: 0,
        values: [.integer(key * 3), .text("memo for row \(key)"), .integer((key - 1) / 10 + 1)]))
}
for owner in owners { for n in Int64(0)..<10 { changes.links.append(JoinLink(join: 0, leftKey: owner, rightKey: (owner * 7 + n * 997) % 10_000 + 1)) } }
try engine.commit(changes)
let reader = try engine.makeReader()
for _ in 0..<3 {
    try microEquality(reader); try microMembership(reader); try microMembershipAnyOrder(reader); try microMembershipGeneral(reader); try microNotNull(reader)
    try microFetchAll(reader); try microLinks(reader); try microLinksPerKey(reader)
}
reader.close()
engine.close()
print(sink)

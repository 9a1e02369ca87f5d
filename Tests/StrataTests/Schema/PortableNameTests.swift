import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import StrataPostgres

// Models whose names break the rules every engine keeps (each refused when its Schema is made).
final class PortableThing: ManagedObject {
    override class var entityName: String { "Thing" }
    @Attribute var count = 0
}

final class PortableLowerThing: ManagedObject {
    override class var entityName: String { "thing" }
    @Attribute var count = 0
}

final class PortableCaseAttributes: ManagedObject {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    @Attribute var Value = 0
    @Attribute var value = 0
}

final class PortableUpperID: ManagedObject {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    @Attribute var ID = 0
}

final class PortableLongName: ManagedObject {
    override class var entityName: String { String(repeating: "L", count: 64) }
    @Attribute var count = 0
}

final class PortableVeryLongName: ManagedObject {
    override class var entityName: String { String(repeating: "V", count: 200) }
    @Attribute var count = 0
}

final class PortableLongIndexOwner: ManagedObject {
    override class var entityName: String { String(repeating: "O", count: 40) }
    @Attribute(.indexed) var twentyCharacterName1 = 0
}

final class PortableReservedName: ManagedObject {
    override class var entityName: String { "strata_history" }
    @Attribute var count = 0
}

final class PortableSQLiteName: ManagedObject {
    override class var entityName: String { "SQLITE_stat9" }
    @Attribute var count = 0
}

// Names of the longest length every engine keeps: 63 bytes, renamed by an inferred migration.
final class PortableLongestV1: ManagedObject {
    override class var entityName: String { "Eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" }
    @Attribute var abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb = 0
}

final class PortableLongestV2: ManagedObject {
    override class var entityName: String { "Fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff" }
    override class var originalEntityName: String? { "Eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" }
    @Attribute var abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb = 0
}

/// The naming rules every engine keeps, checked by the core when a `Schema` is made, so a model
/// that opens on one engine opens on every engine (an outside probe found models SQLite refused
/// and the others took, and the other way round): names that differ only in case, names over 63
/// bytes (PostgreSQL's limit, index names made from them included), and the engines' own table
/// names are refused with `.invalidSchema` saying what to change; names of 63 bytes work on
/// every engine, through a migration that renames the entity.
@Suite("portable names")
struct PortableNameTests {
    static let refused: [(String, [ManagedObject.Type], String)] = [
        ("entity names that differ in case", [PortableThing.self, PortableLowerThing.self], "differ only in case"),
        ("attribute names that differ only in case", [PortableCaseAttributes.self], "differ only in case"),
        ("an attribute ID next to the primary key id", [PortableUpperID.self], "the primary key id"),
        ("a 64-byte entity name", [PortableLongName.self], "has 64 bytes"),
        ("a 200-letter entity name", [PortableVeryLongName.self], "has 200 bytes"),
        ("an index name made past 63 bytes", [PortableLongIndexOwner.self], "index"),
        ("an engine's own table name", [PortableReservedName.self], "keeps for itself"),
        ("SQLite's prefix, in any case", [PortableSQLiteName.self], "keeps for itself"),
    ]

    @Test("names no engine could keep are refused when the schema is made, saying what to change")
    func refusedNames() {
        for (what, types, words) in Self.refused {
            do {
                _ = try Schema(types)
                Issue.record("\(what): the schema was made")
            } catch .invalidSchema(let message) {
                #expect(message.contains(words), "\(what): \(message)")
                #expect(!message.contains("SQLite store") && !message.contains("must be ASCII"), "\(what): \(message)")
            } catch {
                Issue.record("\(what): expected invalidSchema, got \(error)")
            }
        }
    }

    @Test(
        "63-byte entity and attribute names open, migrate (a rename) and save on every engine",
        arguments: EngineKind.allCases)
    func longestNames(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        do {
            let container = try store.open(schema: try Schema(version: 1, [PortableLongestV1.self]))
            defer { container.close() }
            let context = container.newBackgroundContext()
            try await context.perform {
                for value in 1...3 {
                    PortableLongestV1(context: context)
                        .abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb = value
                }
                try context.save()
            }
        }
        let container = try store.open(schema: try Schema(version: 2, [PortableLongestV2.self]))
        defer { container.close() }
        let context = container.newBackgroundContext()
        let values = try await context.perform {
            PortableLongestV2(context: context).abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb = 4
            try context.save()
            let objects = try context.fetch(FetchRequest<PortableLongestV2>())
            return objects.map(\.abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb).sorted()
        }
        #expect(values == [1, 2, 3, 4])
    }

    @Test("PostgreSQL's primary key and join index names stay within 63 bytes and apart")
    func derivedNames() {
        #expect(PostgresDerivedName.primaryKey(of: "Account") == "Account_pkey")
        #expect(PostgresDerivedName.rightIndex(of: "A_b__C_d") == "A_b__C_d_right")
        let first = PostgresDerivedName.primaryKey(of: String(repeating: "x", count: 62) + "1")
        let second = PostgresDerivedName.primaryKey(of: String(repeating: "x", count: 62) + "2")
        #expect(first.utf8.count <= 63 && second.utf8.count <= 63 && first != second, "\(first) \(second)")
        #expect(first.hasSuffix("_pkey") && first.hasPrefix("xxxx"))
    }
}

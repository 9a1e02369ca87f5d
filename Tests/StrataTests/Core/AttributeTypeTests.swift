import CSQLite
import Foundation
import Testing

@testable import Strata

/// A raw-value enum whose `Comparable` order is its raw value's; `CaseIterable`, so that
/// `.rawValue` comparisons run in the engine.
/// An enum that is not `CaseIterable`: its `.rawValue` comparisons run in memory.
enum Weather: Int, RawValueAttribute, Codable {
    case sun = 1
    case rain = 2
}

enum Mood: String, RawValueAttribute, Codable, Comparable, CaseIterable {
    case happy, sad, tired
    static func < (lhs: Mood, rhs: Mood) -> Bool { lhs.rawValue < rhs.rawValue }
}

struct Place: CodableAttribute, Equatable {
    var name: String
    var latitude: Double = 0
}

final class Diary: ManagedObject {
    @Attribute var title = ""
    @Attribute var mood = Mood.happy
    @Attribute var lastMood: Mood?
    @Attribute var place: Place?
    @Attribute var tags: [String] = []
    @Attribute var weather = Weather.sun
}

final class UniquePlace: ManagedObject {
    @Attribute(.unique) var place = Place(name: "home")
}

final class InfiniteDefault: ManagedObject {
    @Attribute var place = Place(name: "nowhere", latitude: .infinity)
}

@Suite("attribute types")
struct AttributeTypeTests {
    /// Which predicate shapes on enums and Codable values run in the engine (a pure filter):
    /// the ones whose answer does not depend on the type's own `==` or `<`.
    @Test("enum equality, membership, raw-value comparisons and Codable nil checks compile to engine filters")
    func pushdown() throws {
        let model = try #require(try Schema(version: 1, [Diary.self]).models.first)
        let happy = Mood.happy
        let moods = [Mood.happy, .tired]
        let home = Place(name: "home")
        let sun = Weather.sun
        let cases: [(String, Predicate<Diary>, Bool)] = [
            ("mood == captured", #Predicate { $0.mood == happy }, true),
            ("mood != captured", #Predicate { $0.mood != happy }, true),
            ("optional mood == captured", #Predicate { $0.lastMood == happy }, true),
            ("optional mood == nil", #Predicate { $0.lastMood == nil }, true),
            ("membership", #Predicate { moods.contains($0.mood) }, true),
            ("rawValue <", #Predicate { $0.mood.rawValue < "m" }, true),
            ("rawValue starts(with:)", #Predicate { $0.mood.rawValue.starts(with: "h") }, true),
            ("place == nil", #Predicate { $0.place == nil }, true),
            ("place != nil", #Predicate { $0.place != nil }, true),
            ("weather == captured", #Predicate { $0.weather == sun }, true),
            ("weather.rawValue > 1, not CaseIterable", #Predicate { $0.weather.rawValue > 1 }, false),
            ("mood < captured (the type's own order)", #Predicate { $0.mood < happy }, false),
            ("place == captured (the type's own ==)", #Predicate { $0.place == home }, false),
            ("place field", #Predicate { $0.place?.name == "home" }, false),
            ("array contains", #Predicate { $0.tags.contains("x") }, false),
        ]
        for (name, predicate, pushed) in cases {
            let node = PredicateCompiler.compile(predicate, model: model)
            #expect((node.pureFilter != nil) == pushed, "\(name)")
        }
    }

    @Test("a unique Codable attribute and a default that cannot be encoded are invalid schemas")
    func invalidDeclarations() throws {
        for type in [UniquePlace.self, InfiniteDefault.self] as [ManagedObject.Type] {
            #expect {
                _ = try Schema(version: 1, [type])
            } throws: { error in
                guard case StrataError.invalidSchema(let detail) = error else { return false }
                return detail.contains(type.entityName + ".place")
            }
        }
    }

    /// An enum raw value and JSON written with sqlite3 behind the engine's back (as a newer model
    /// version or a hand edit would) make fetch and lookup throw, naming the row and attribute.
    @Test("values written by hand with sqlite3 that do not decode are undecodableValue errors")
    func handWrittenValues() async throws {
        let store = try TestStore(.sqlite)
        let container = try store.open(schema: try Schema(version: 1, [Diary.self]))
        let context = container.newBackgroundContext()
        let id = try await context.perform {
            let diary = Diary(context: context)
            diary.place = Place(name: "home")
            try context.save()
            return diary.objectID
        }
        let path = store.directory.appendingPathComponent("store.sqlite").path
        for (column, sql) in [("mood", "'bored'"), ("place", "CAST('{\"name\":3}' AS BLOB)")] {
            try RawSQLite(path: path).execute("UPDATE \"Diary\" SET \"\(column)\" = \(sql)")
            let reader = container.newBackgroundContext()
            let errors: [StrataError?] = try await reader.perform {
                [
                    Self.strataError { _ = try reader.fetch(FetchRequest<Diary>()) },
                    Self.strataError { _ = try reader.existingObject(with: id, as: Diary.self) },
                ]
            }
            for error in errors {
                guard let error, case .undecodableValue("Diary", column, id.primaryKey ?? 0, let reason) = error else {
                    Issue.record("\(column): expected undecodableValue, got \(String(describing: error))")
                    continue
                }
                #expect(error.description.contains("cannot decode"), "\(error)")
                #expect(!reason.isEmpty)
            }
            try RawSQLite(path: path).execute("UPDATE \"Diary\" SET \"mood\" = 'sad', \"place\" = NULL")
        }
        let fixed = container.newBackgroundContext()
        let values = try await fixed.perform {
            let diary = try fixed.existingObject(with: id, as: Diary.self)
            return (diary.mood, diary.place)
        }
        #expect(values.0 == .sad && values.1 == nil)
    }

    /// The `StrataError` a call throws, or nil when it returns (or throws something else).
    static func strataError(_ body: () throws -> Void) -> StrataError? {
        do {
            try body()
            return nil
        } catch {
            return error as? StrataError
        }
    }
}

import Foundation
import Synchronization
import Testing

@testable import Strata

/// Property wrappers carry only their declaration's site; the model maps sites and key paths
/// to properties. These checks are about the model alone (no store is opened).
@Suite("property sites")
struct PropertySiteTests {
    @Test("a wrapper is four bytes in every object, whatever its value type")
    func wrapperSize() {
        #expect(MemoryLayout<Attribute<String>>.size == 4)
        #expect(MemoryLayout<Attribute<Date?>>.size == 4)
        #expect(MemoryLayout<Relationship<Account?>>.size == 4)
        #expect(MemoryLayout<Relationship<RelatedObjects<Entry>>>.size == 4)
    }

    @Test("defaults and options come from the declaration, not from the instance")
    func declarationsReachTheModel() throws {
        let model = try ModelRegistry.model(for: Account.self)
        let currency = try #require(model.propertyIndex(named: "currency"))
        let name = try #require(model.propertyIndex(named: "name"))
        #expect(model.defaults[try #require(model.properties[currency].column)] == .text("EUR"))
        guard case .attribute(_, _, let options) = model.properties[name].kind else {
            Issue.record("name is not an attribute")
            return
        }
        #expect(options.contains(.unique))
        let fresh = Account()
        #expect(fresh.currency == "EUR")
        #expect(fresh.note == nil)
    }

    @Test("stored properties and projections map to their property; computed ones do not")
    func keyPathMapping() throws {
        let model = try ModelRegistry.model(for: SiteProbe.self)
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.amount) == model.propertyIndex(named: "amount"))
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.label) == model.propertyIndex(named: "label"))
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.owner) == model.propertyIndex(named: "owner"))
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.$owner) == model.propertyIndex(named: "owner"))
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.amountInCents) == nil)
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.negated) == nil)
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.sameAmount) == nil)
        #expect(model.propertyIndex(forKeyPath: \SiteProbe.sum) == nil)
    }

    @Test(
        """
        mapping never runs the setter of a computed property that reads several attributes, and runs a \
        one-attribute one's once
        """
    )
    func computedSetters() throws {
        let model = try ModelRegistry.model(for: SiteSetterProbe.self)
        // fullName's setter would trap on the prototype's defaults (an empty split).
        #expect(model.propertyIndex(forKeyPath: \SiteSetterProbe.fullName) == nil)
        #expect(model.propertyIndex(forKeyPath: \SiteSetterProbe.fullName) == nil)
        #expect(SiteSetterProbe.fullNameSets.load(ordering: .relaxed) == 0)
        #expect(model.propertyIndex(forKeyPath: \SiteSetterProbe.shout) == nil)
        #expect(model.propertyIndex(forKeyPath: \SiteSetterProbe.shout) == nil)
        #expect(SiteSetterProbe.shoutSets.load(ordering: .relaxed) == 1)
        #expect(model.propertyIndex(forKeyPath: \SiteSetterProbe.first) == model.propertyIndex(named: "first"))
    }

    @Test("a private(set) attribute's key path, formed in another file, maps to its column")
    func privateSetter() throws {
        let model = try ModelRegistry.model(for: SitePrivateSet.self)
        let keyPath: AnyKeyPath = \SitePrivateSet.locked
        #expect(keyPath is ReferenceWritableKeyPath<SitePrivateSet, Int64>)
        #expect(model.propertyIndex(forKeyPath: keyPath) == model.propertyIndex(named: "locked"))
        #expect(model.propertyIndex(forKeyPath: \SitePrivateSet.note) == model.propertyIndex(named: "note"))
    }

    @Test(
        "an inherited attribute declared in another file at the same line and column keeps its own column",
        arguments: EngineKind.allCases)
    func sameLineAndColumnInAnotherFile(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let schema = try Schema(version: 1, [SiteStampedNote.self])
        let model = try ModelRegistry.model(for: SiteStampedNote.self)
        #expect(model.properties.map(\.name) == ["stamp", "text"])
        let id = try await Self.writeNote(in: store, schema: schema)
        // A second container reads what the first one saved.
        let container = try store.open(schema: schema)
        let reader = container.newBackgroundContext()
        let (stamp, text) = try await reader.perform {
            let note = try reader.existingObject(with: id, as: SiteStampedNote.self)
            return (note.stamp, note.text)
        }
        #expect(stamp == 42)
        #expect(text == "hello")
    }

    private static func writeNote(in store: TestStore, schema: Schema) async throws -> ObjectID {
        let container = try store.open(schema: schema)
        return try await container.performUnitOfWork { context in
            let note = SiteStampedNote(context: context)
            #expect(note.stamp == 7 && note.text == "")
            note.stamp = 42
            note.text = "hello"
            try context.save()
            return note.objectID
        }
    }

    @Test("two declarations with the same site are refused with a typed error")
    func siteClash() {
        #expect {
            try ModelRegistry.model(for: SiteClash.self)
        } throws: { error in
            guard case StrataError.invalidSchema(let message) = error else { return false }
            return message.contains("first") && message.contains("second")
        }
    }

    @Test("two different declaration positions whose 32-bit hashes collide are refused with a typed error")
    func siteHashCollision() {
        // Found by a search over file names: different text, one site.
        #expect(SiteHashCollision.firstFile.description != SiteHashCollision.secondFile.description)
        #expect(
            PropertySite.make(fileID: SiteHashCollision.firstFile, line: 1, column: 1)
                == PropertySite.make(fileID: SiteHashCollision.secondFile, line: 1, column: 1))
        #expect {
            try ModelRegistry.model(for: SiteHashCollision.self)
        } throws: { error in
            guard case StrataError.invalidSchema(let message) = error else { return false }
            return message.contains("left") && message.contains("right") && message.contains("hash collision")
        }
    }
}

final class SiteProbe: ManagedObject {
    @Attribute var amount: Int64 = 0
    @Attribute var label = ""
    @Relationship var owner: SiteProbeOwner?

    var amountInCents: Int64 {
        get { amount * 100 }
        set { amount = newValue / 100 }
    }
    var negated: Int64 { -amount }
    /// Reads and writes `amount` unchanged, but is not `amount`'s key path.
    var sameAmount: Int64 {
        get { amount }
        set { amount = newValue }
    }
    var sum: Int64 { amount + Int64(label.count) }
}

final class SiteSetterProbe: ManagedObject {
    static let fullNameSets = Atomic<Int>(0)
    static let shoutSets = Atomic<Int>(0)
    @Attribute var first = ""
    @Attribute var last = ""

    var fullName: String {
        get { "\(first) \(last)" }
        set {
            Self.fullNameSets.wrappingAdd(1, ordering: .relaxed)
            let parts = newValue.split(separator: " ", maxSplits: 1)
            first = String(parts[0])
            last = parts.count > 1 ? String(parts[1]) : ""
        }
    }

    /// Reads one attribute and writes it transformed.
    var shout: String {
        get { first.uppercased() }
        set {
            Self.shoutSets.wrappingAdd(1, ordering: .relaxed)
            first = newValue.lowercased()
        }
    }
}

final class SiteProbeOwner: ManagedObject {
    @Relationship(inverse: \SiteProbe.owner) var probes: RelatedObjects<SiteProbe>
}

/// An entity whose base class declares an attribute in another file at the same line and column.
final class SiteStampedNote: SiteStamped {
    @Attribute(_line: 1, _column: 1) var text = ""
}

/// Two attributes declared with the same (explicit) site.
final class SiteClash: ManagedObject {
    static let file: StaticString = "StrataTests/SiteClash.swift"
    @Attribute(_fileID: SiteClash.file, _line: 1, _column: 1) var first: Int64 = 0
    @Attribute(_fileID: SiteClash.file, _line: 1, _column: 1) var second: Int64 = 0
}

/// Two attributes at different (explicit) positions whose sites are equal: a hash collision.
final class SiteHashCollision: ManagedObject {
    static let firstFile: StaticString = "StrataTests/Collision39432.swift"
    static let secondFile: StaticString = "StrataTests/Collision87646.swift"
    @Attribute(_fileID: SiteHashCollision.firstFile, _line: 1, _column: 1) var left: Int64 = 0
    @Attribute(_fileID: SiteHashCollision.secondFile, _line: 1, _column: 1) var right: Int64 = 0
}

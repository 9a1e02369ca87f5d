import Foundation
import Strata

/// The model the checks use: a chart of accounts with entries and tags (many-to-many), an
/// entity with every attribute type, delete-rule fixtures and a compound constraint.
enum KitModels {
    static let types: [ManagedObject.Type] = [
        KitAccount.self, KitEntry.self, KitTag.self, KitSample.self, KitOwner.self, KitPet.self, KitPassport.self,
        KitSeat.self, KitMember.self,
    ]

    static let schema: Schema = {
        do {
            return try Schema(version: 1, types)
        } catch {
            fatalError("the conformance kit's schema is invalid: \(error)")
        }
    }()
}

final class KitAccount: ManagedObject {
    override class var entityName: String { "Account" }
    @Attribute(.unique) var name = ""
    @Attribute var currency = "EUR"
    @Attribute var balance: Int64 = 0
    @Attribute var note: String?
    @Relationship(inverse: \KitEntry.account, deleteRule: .deny) var entries: RelatedObjects<KitEntry>
    @Relationship(inverse: \KitTag.accounts) var tags: RelatedObjects<KitTag>

    /// A computed property that reads and writes `balance`, transformed: predicates and sorts on
    /// it must not be taken for `balance` itself.
    var balanceInCents: Int64 {
        get { balance * 100 }
        set { balance = newValue / 100 }
    }

    /// A read-only computed property that reads `balance`, negated.
    var debt: Int64 { -balance }
}

final class KitEntry: ManagedObject {
    override class var entityName: String { "Entry" }
    @Attribute var amount: Int64 = 0
    @Attribute var memo = ""
    @Relationship var account: KitAccount?
}

final class KitTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label = ""
    @Relationship var accounts: RelatedObjects<KitAccount>
}

/// One attribute of every supported type, optional and not; some kept in history tombstones.
final class KitSample: ManagedObject {
    override class var entityName: String { "Sample" }
    @Attribute(.preserveAfterDeletion) var flag = false
    @Attribute var int = 0
    @Attribute(.preserveAfterDeletion) var int64: Int64 = 0
    @Attribute(.preserveAfterDeletion) var double = 0.0
    @Attribute(.preserveAfterDeletion) var text = ""
    @Attribute(.preserveAfterDeletion) var date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute(.preserveAfterDeletion) var data = Data()
    @Attribute(.preserveAfterDeletion) var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    @Attribute var optionalFlag: Bool?
    @Attribute var optionalInt: Int?
    @Attribute(.preserveAfterDeletion) var optionalInt64: Int64?
    @Attribute var optionalDouble: Double?
    @Attribute(.preserveAfterDeletion) var optionalText: String?
    @Attribute var optionalDate: Date?
    @Attribute var optionalData: Data?
    @Attribute var optionalUUID: UUID?
}

/// An owner cascades to its pets and nullifies its passport (one-to-one). Owners' and pets'
/// names are kept in history tombstones.
final class KitOwner: ManagedObject {
    override class var entityName: String { "Owner" }
    @Attribute(.preserveAfterDeletion) var name = ""
    @Relationship(inverse: \KitPet.owner, deleteRule: .cascade) var pets: RelatedObjects<KitPet>
    @Relationship(inverse: \KitPassport.holder, deleteRule: .nullify) var passport: KitPassport?
}

final class KitPet: ManagedObject {
    override class var entityName: String { "Pet" }
    @Attribute(.preserveAfterDeletion) var name = ""
    @Relationship var owner: KitOwner?
}

final class KitPassport: ManagedObject {
    override class var entityName: String { "Passport" }
    @Attribute var number = ""
    @Relationship var holder: KitOwner?
}

/// A compound uniqueness constraint and two secondary indexes.
final class KitSeat: ManagedObject {
    override class var entityName: String { "Seat" }
    @Attribute var row = ""
    @Attribute var number = 0
    @Attribute(.indexed) var holder = ""
    @Attribute var note: String?
    @Attribute(.unique) var code: String?

    override class var indexes: [EntityIndex] {
        [.unique(\KitSeat.row, \KitSeat.number), .index(\KitSeat.holder, \KitSeat.number)]
    }
}

/// A member of an organisation, some of them its admins: the phantom that
/// `requireUnchangedResults(of:)` guards against is a second admin of one org.
final class KitMember: ManagedObject {
    override class var entityName: String { "Member" }
    @Attribute(.indexed) var org = 0
    @Attribute var name = ""
    @Attribute var isAdmin = false
}

extension PersistentContainer {
    /// Saves one account and returns its ID.
    func makeAccount(_ name: String, balance: Int64 = 0, note: String? = nil) async throws -> ObjectID {
        try await performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = name
            account.balance = balance
            account.note = note
            try context.save()
            return account.objectID
        }
    }

    /// Reads something in a fresh context.
    func read<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try body(context) }
    }
}

import Foundation
import Strata

/// A small chart of accounts with transactions, tags (many-to-many), and an entity with every
/// attribute type, shared by the tests.
enum TestModels {
    static let schema: Schema = {
        do {
            return try Schema(version: 1, [Account.self, Entry.self, Tag.self, Sample.self, Owner.self, Pet.self, Passport.self, Seat.self])
        } catch {
            fatalError("fixture schema: \(error)")
        }
    }()
}

final class Account: ManagedObject {
    @Attribute(.unique) var name = ""
    @Attribute var currency = "EUR"
    @Attribute var balance: Int64 = 0
    @Attribute var note: String?
    @Relationship(inverse: \Entry.account, deleteRule: .deny) var entries: RelatedObjects<Entry>
    @Relationship(inverse: \Tag.accounts) var tags: RelatedObjects<Tag>
}

final class Entry: ManagedObject {
    @Attribute var amount: Int64 = 0
    @Attribute var memo = ""
    @Attribute var date = Date(timeIntervalSinceReferenceDate: 0)
    @Relationship var account: Account?
}

final class Tag: ManagedObject {
    @Attribute var label = ""
    @Relationship var accounts: RelatedObjects<Account>
}

/// One attribute of every supported type, optional and not.
final class Sample: ManagedObject {
    @Attribute var flag = false
    @Attribute var int = 0
    @Attribute var int64: Int64 = 0
    @Attribute var double = 0.0
    @Attribute var text = ""
    @Attribute var date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var data = Data()
    @Attribute var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    @Attribute var optionalFlag: Bool?
    @Attribute var optionalInt: Int?
    @Attribute var optionalInt64: Int64?
    @Attribute var optionalDouble: Double?
    @Attribute var optionalText: String?
    @Attribute var optionalDate: Date?
    @Attribute var optionalData: Data?
    @Attribute var optionalUUID: UUID?
}

/// Delete-rule fixtures: an owner cascades to pets and nullifies its passport.
final class Owner: ManagedObject {
    @Attribute var name = ""
    @Relationship(inverse: \Pet.owner, deleteRule: .cascade) var pets: RelatedObjects<Pet>
    @Relationship(inverse: \Passport.holder, deleteRule: .nullify) var passport: Passport?
}

final class Pet: ManagedObject {
    @Attribute var name = ""
    @Relationship var owner: Owner?
}

final class Passport: ManagedObject {
    @Attribute var number = ""
    @Relationship var holder: Owner?
}

/// A compound uniqueness constraint and a secondary index.
final class Seat: ManagedObject {
    @Attribute var row = ""
    @Attribute var number = 0
    @Attribute(.indexed) var holder = ""

    override class var indexes: [EntityIndex] { [.unique(\Seat.row, \Seat.number), .index(\Seat.holder, \Seat.number)] }
}

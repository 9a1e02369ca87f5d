import Foundation
import Strata

/// A small chart of accounts with entries and tags, for the tests outside the conformance kit
/// (which has its own models).
enum TestModels {
    static let schema: Schema = {
        do {
            return try Schema(version: 1, [Account.self, Entry.self, Tag.self])
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

extension Account {
    /// Saves a new account named `name` (balance 0) in a context of its own; its ID.
    static func insert(named name: String, into container: PersistentContainer) async throws -> ObjectID {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let account = Account(context: context)
            account.name = name
            try context.save()
            return account.objectID
        }
    }
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

// A minimal Strata program: define two entities, open a store, run units of work.
//
//   swift run strata-quickstart [--engine sqlite|lmdb] [--store PATH]

import Foundation
import Strata
import StrataLMDB
import StrataSQLite

final class Account: ManagedObject {
    @Attribute(.unique) var name = ""
    @Attribute var balance: Int64 = 0
    @Relationship(inverse: \Entry.account, deleteRule: .cascade) var entries: RelatedObjects<Entry>
}

final class Entry: ManagedObject {
    @Attribute var amount: Int64 = 0
    @Attribute var memo = ""
    @Relationship var account: Account?
}

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let engineName = option("--engine") ?? "sqlite"
let storeURL = URL(
    fileURLWithPath: option("--store") ?? NSTemporaryDirectory() + "strata-quickstart-\(UUID().uuidString)"
        + (engineName == "lmdb" ? "" : ".sqlite"))

do {
    let engine: EngineConfiguration
    switch engineName {
    case "sqlite": engine = .sqlite(at: storeURL)
    case "lmdb": engine = .lmdb(at: storeURL)
    default:
        FileHandle.standardError.write(Data("unknown engine \(engineName); use sqlite or lmdb\n".utf8))
        exit(2)
    }
    let container = try PersistentContainer(schema: try Schema(version: 1, [Account.self, Entry.self]), engine: engine)

    // One unit of work: a fresh context, all of it inside perform, one save.
    let accountID: ObjectID = try await container.performUnitOfWork { context in
        let account = Account(context: context)
        account.name = "Checking \(UUID().uuidString.prefix(4))"
        for (amount, memo) in [(12_500, "Salary"), (-4_200, "Rent"), (-1_350, "Groceries")] {
            let entry = Entry(context: context)
            entry.amount = Int64(amount)
            entry.memo = memo
            account.entries.insert(entry)
            account.balance += Int64(amount)
        }
        try context.save()
        return account.objectID
    }

    // Another unit of work reads it back by its ID, in a fresh context.
    let context = container.newBackgroundContext()
    let lines: [String] = try await context.perform {
        let account = try context.existingObject(with: accountID, as: Account.self)
        let entries = try context.fetch(
            FetchRequest<Entry>(
                predicate: #Predicate { $0.amount < 0 }, sortBy: [SortDescriptor(\.amount)]))
        var lines = [
            "\(account.name) (\(engineName)): balance \(account.balance) cents, \(account.entries.count) entries"
        ]
        lines += entries.map { "  spent \(-$0.amount) cents on \($0.memo)" }
        lines.append("  URI: \(accountID.uriString)")
        return lines
    }
    lines.forEach { print($0) }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}

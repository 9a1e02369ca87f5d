import Foundation
import ShopTypes
import Strata
import StrataSQLite

final class Product: ManagedObject {
    @Attribute var name = ""
    @Attribute var price: Int64 = 0
}

// The user's own types, named without qualification next to Strata's API: in type positions, in
// extensions and in calls.
extension Filter {
    static let tea = Filter(text: "tea")
}

func summary(_ filter: Filter, _ changes: ChangeSet, _ plan: FetchPlan, _ key: SortKey) -> String {
    "\(filter.text): \(changes.added.count) added, pages of \(plan.pageSize), by \(key.rawValue)"
}

let filter: Filter = .tea
let changes: ChangeSet = ChangeSet(added: ["green tea"])
let plan: FetchPlan = FetchPlan(pageSize: 20)
let key: SortKey = .price

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nameclash-\(UUID())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let schema = try Schema(version: 1, [Product.self])
let container = try PersistentContainer(
    schema: schema, engine: .sqlite(at: directory.appendingPathComponent("shop.sqlite")))
let context = container.newBackgroundContext()
let names = try await context.perform {
    for name in changes.added {
        let product = Product(context: context)
        product.name = name
        product.price = Int64(plan.pageSize)
    }
    try context.save()
    let wanted = changes.added[0]
    let request = FetchRequest<Product>(predicate: #Predicate { $0.name == wanted }, fetchLimit: plan.pageSize)
    return try context.fetch(request).map(\.name)
}
print("\(summary(filter, changes, plan, key)): \(names)")
container.close()

import Foundation
import Strata

/// A raw-value enum stored as text.
enum KitStatus: String, RawValueAttribute, Codable, CaseIterable {
    case draft, active, archived
}

/// A raw-value enum whose own order (declaration order) is not its raw values' order: a
/// predicate or sort that compared raw values in the engine would give other results.
enum KitPriority: Int, RawValueAttribute, Codable, Comparable, CaseIterable {
    case low = 30
    case normal = 10
    case high = 20

    static func < (lhs: KitPriority, rhs: KitPriority) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A Codable struct stored as JSON.
struct KitAddress: CodableAttribute, Equatable {
    var street: String
    var city: String
    var latitude: Double = 0
}

/// One attribute of each new kind, optional and not, with defaults.
final class KitTicket: ManagedObject {
    override class var entityName: String { "Ticket" }
    @Attribute var title = ""
    @Attribute(.indexed) var status = KitStatus.draft
    @Attribute var previous: KitStatus?
    @Attribute var priority = KitPriority.normal
    @Attribute var address = KitAddress(street: "1 Main Street", city: "Oslo")
    @Attribute var mailing: KitAddress?
    @Attribute var labels: [String] = ["new"]
    @Attribute var history: [KitStatus]?
}

enum AttributeTypeModels {
    static let schema: Schema = {
        do {
            return try Schema(version: 1, [KitTicket.self])
        } catch {
            fatalError("the conformance kit's attribute-type schema is invalid: \(error)")
        }
    }()
}

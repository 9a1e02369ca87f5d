public import Foundation
import StrataStorage

/// What to fetch: an entity, an optional `Predicate`, sort descriptors, a limit and an offset.
///
/// ```swift
/// let request = FetchRequest<Account>(
///     predicate: #Predicate { $0.balance > 100 && $0.name.starts(with: "Ch") },
///     sortBy: [SortDescriptor(\.balance, order: .reverse)],
///     fetchLimit: 20)
/// let accounts = try context.fetch(request)
/// ```
///
/// Semantics (the same on every engine, and in memory):
/// - Strings compare by Unicode scalar values (binary UTF-8 order), in predicates and sorts,
///   whatever comparator a `SortDescriptor` names. `contains` and `starts(with:)` match bytes.
///   The exception: a string comparison that Foundation evaluates in memory (through an optional
///   chain such as `$0.account?.name`, a force unwrap, `??` or a conditional) and a sort
///   descriptor through a relationship follow Swift's `String` rules, where composed and
///   decomposed forms of a character are equal (`Docs/AttributeTypes.md`).
/// - nil sorts first in ascending order (last in descending).
/// - Ties are broken by primary key, ascending, so results are stable.
/// - Dates compare at full `Double` precision.
/// - Comparisons, `&&`, `||`, `!`, nil checks, `contains`, `starts(with:)`, membership in a
///   constant collection, relationship-key equality (`$0.$account == id`) and a to-one compared
///   with nil (`$0.account == nil`, which holds only when no object is linked, saved or not) run
///   in the engine. Anything else is evaluated in memory with the same results; no part of a
///   predicate is dropped. Integer arithmetic evaluated in memory that overflows or divides by
///   zero throws ``StrataStorage/StrataError/misuse(_:native:)`` instead of trapping.
/// - Raw-value enums compare for equality and membership in the engine, by raw value; their
///   `<` and sorts use the enum's own order, in memory. `Codable` attributes run only nil checks
///   in the engine. (`#Predicate` takes no enum case literal: capture the value in a constant.)
/// - Unsaved changes in the context are included: inserted objects that match, changed values,
///   and no deleted objects.
/// - A relationship-key comparison (`$0.$account == id`, `ids.contains($0.$account)`) accepts
///   only permanent IDs of this store and of the relationship's target entity; any other ID
///   makes `fetch`/`count` throw ``StrataStorage/StrataError/invalidURI(_:reason:)``, as
///   ``ObjectContext/existingObject(with:)`` does.
/// - An entity class the container's schema does not list makes `fetch`/`count` throw `.misuse`.
public struct FetchRequest<Entity: ManagedObject>: Sendable {
    /// Which objects to fetch; nil for all.
    public var predicate: Predicate<Entity>?
    /// The result order, most significant first; ties are broken by primary key.
    public var sortBy: [SortDescriptor<Entity>]
    /// At most this many results; nil for all. Any value from 0 to `Int.max` is valid; a
    /// negative one makes `fetch`/`count` throw `.misuse`.
    public var fetchLimit: Int?
    /// Skip this many results first. Any value from 0 to `Int.max` is valid (past the last
    /// result there is nothing); a negative one makes `fetch`/`count` throw `.misuse`.
    public var fetchOffset: Int
    /// Relationships to load for every result as part of the fetch, in one read per
    /// relationship instead of one fault per object (Core Data's and SwiftData's
    /// `relationshipKeyPathsForPrefetching`).
    ///
    /// ```swift
    /// var request = FetchRequest<Account>()
    /// request.relationshipKeyPathsForPrefetching = [\.transactions]
    /// var total = 0
    /// for account in try context.fetch(request) {
    ///     total += account.transactions.count  // loaded already: no read per account
    /// }
    /// ```
    /// A to-many relationship is read for all results at once (one index scan, or one pass over
    /// the join table for many-to-many); a to-one relationship's targets are registered in the
    /// context. The results are exactly those of faulting each object: unsaved changes in the
    /// context are included. List direct relationships of `Entity` only: any other key path
    /// makes `fetch` throw `.misuse`. Even without prefetching, faulting a to-many on one result
    /// of a fetch loads it for every result of that fetch (batch faulting), unless unsaved
    /// changes in the context affect it: then each object's fault reads its own members.
    public var relationshipKeyPathsForPrefetching: [any PartialKeyPath<Entity> & Sendable]

    /// A request for objects of `Entity`.
    public init(
        predicate: Predicate<Entity>? = nil, sortBy: [SortDescriptor<Entity>] = [], fetchLimit: Int? = nil,
        fetchOffset: Int = 0, relationshipKeyPathsForPrefetching: [any PartialKeyPath<Entity> & Sendable] = []
    ) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
    }
}

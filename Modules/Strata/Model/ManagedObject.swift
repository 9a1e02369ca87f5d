import Foundation
public import StrataStorage
import Synchronization

/// The base class of every model class: an object in a context's graph, backed by one row.
///
/// Subclass it, declare properties with ``Attribute`` and ``Relationship``, and list the
/// class in a ``Schema``:
///
/// ```swift
/// final class Account: ManagedObject {
///     @Attribute(.unique) var name = ""
///     @Attribute var balance: Int64 = 0
///     @Relationship(inverse: \Transaction.account, deleteRule: .deny)
///     var transactions: RelatedObjects<Transaction>
/// }
///
/// try await context.perform {
///     let account = Account(context: context)
///     account.name = "Checking"
///     try context.save()
/// }
/// ```
///
/// Lifetime rule: an object belongs to the context that inserted or fetched it and is valid
/// only inside that context's `perform`. It is not `Sendable`; pass its ``objectID`` instead.
/// Using it anywhere else stops the program with a message naming the call.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The entity's model, or nil before the object has one.
    final var model: EntityModel? {
        get { modelReference?.model }
        set { modelReference = newValue.map { ModelReference($0, for: self) } }
    }
    /// The model, held without reference counting: models live for the whole process (the
    /// model registry holds every one), and every attribute access goes through it.
    final var modelReference: ModelReference?
    final var link: ContextLink?
    /// Everything a fetched, unchanged object does not need (relationship caches, values kept
    /// for a rollback, the owner of detached values, a temporary serial), made on first need
    /// (``madeSideState``): nil for most objects, which keeps them to a smaller allocation.
    final var sideState: ObjectSideState?
    final var key: Int64 = 0
    final var version: Int64 = 0
    /// The object's column values in ``EntityModel`` column order, in place: slots in its
    /// context's ``ValueArena`` (kept alive by ``link``), in ``detachedValues`` for an object
    /// used before it was inserted, or, for an object of a batched read
    /// (``ObjectContext/forEachBatch(of:size:_:)``), in its batch's block, which the read holds
    /// until the batch ends and then gives every object still held values of its own. Empty until
    /// the object has a model, and set together with it. Twelve bytes (``ValueSlots``), so that
    /// ``state`` fits in the four after.
    final var slots: ValueSlots = .empty
    /// Last, so that a subclass's property wrappers (four bytes each) pack right after it.
    final var state: ObjectState = []

    /// The side state, made now if the object has none yet.
    final var madeSideState: ObjectSideState {
        if let sideState { return sideState }
        let made = ObjectSideState()
        sideState = made
        return made
    }

    /// Owns the slots of an object used before it was inserted, or kept after its batched read's
    /// batch ended (see ``slots``).
    final var detachedValues: DetachedValues? {
        get { sideState?.detachedValues }
        set {
            if newValue == nil && sideState == nil { return }
            madeSideState.detachedValues = newValue
        }
    }

    /// Values as last loaded or saved, kept from the first change until save or rollback.
    final var committedValues: ContiguousArray<StoredValue>? {
        get { sideState?.committedValues }
        set {
            if newValue == nil && sideState == nil { return }
            madeSideState.committedValues = newValue
        }
    }

    /// The serial of the object's temporary ID, given when it is inserted; 0 for a fetched one.
    final var temporarySerial: UInt64 {
        get { sideState?.temporarySerial ?? 0 }
        set {
            if newValue == 0 && sideState == nil { return }
            madeSideState.temporarySerial = newValue
        }
    }

    /// Creates an object that belongs to no context yet; insert it with ``ObjectContext/insert(_:)``.
    /// Subclasses must keep this initializer (all their properties have defaults).
    ///
    /// A fetch calls it for every row it turns into an object, while the engine is reading, so an
    /// override must not use a context or other managed objects; per-object setup of new
    /// objects belongs in ``awakeFromInsert()``.
    public required init() {}

    /// Creates an object and inserts it into `context`.
    ///
    /// Call inside `context.perform`. The object gets a temporary ``objectID`` until saved.
    public convenience init(context: ObjectContext) {
        self.init()
        context.insert(self)
    }

    /// The entity name: the class name unless overridden. It names the table and appears in URIs.
    open class var entityName: String { String(describing: self) }

    /// The entity's name in older stores, when the entity was renamed: a migration then renames
    /// its table and keeps its rows, instead of dropping one entity and adding another.
    ///
    /// ```swift
    /// final class Payee: ManagedObject {
    ///     override class var originalEntityName: String? { "Counterparty" }
    ///     @Attribute var name = ""
    /// }
    /// ```
    open class var originalEntityName: String? { nil }

    /// Secondary indexes and multi-attribute uniqueness constraints of the entity.
    ///
    /// ```swift
    /// override class var indexes: [EntityIndex] {
    ///     [.unique(\Account.currency, \Account.name), .index(\Account.openedAt)]
    /// }
    /// ```
    open class var indexes: [EntityIndex] { [] }

    /// Called once when the object is inserted into a context: set per-object defaults here
    /// (creation dates, UUIDs). Runs inside `perform`.
    open func awakeFromInsert() {}

    /// Called at save for every inserted or updated object before anything is written.
    /// Throw to refuse the save; the error reaches the caller of `save()` unchanged.
    ///
    /// It may change values and insert objects: the save checks the values it leaves (NaN,
    /// uniqueness among unsaved objects) after every override has run. It must not call `save()`,
    /// `rollback()` or `reset()`: the save then throws `.misuse` and writes nothing.
    ///
    /// ```swift
    /// override func validateForSave() throws {
    ///     name = name.trimmingCharacters(in: .whitespaces)
    ///     guard !name.isEmpty else {
    ///         let issue = ValidationIssue(entity: "Payee", property: "name", message: "a name is needed")
    ///         throw StrataError.validation([issue])
    ///     }
    /// }
    /// ```
    open func validateForSave() throws {}

    /// The object's ID: temporary until the first save, permanent after.
    public final var objectID: ObjectID {
        guard let link else {
            fatalError("Strata misuse: \(Self.entityName).objectID read before the object was inserted into a context")
        }
        checkAccess { "\(Self.entityName).objectID" }
        let name = model?.name ?? Self.entityName
        if key > 0 { return ObjectID(storeIdentifier: link.storeIdentifier, entityName: name, kind: .permanent(key)) }
        return ObjectID(storeIdentifier: link.storeIdentifier, entityName: name, kind: .temporary(temporarySerial))
    }

    /// The context the object belongs to, or nil before insertion.
    ///
    /// Like every other use of the object, read it only inside its context's `perform` (where the
    /// context is alive); elsewhere it stops the program with a message naming the property.
    public final var managedObjectContext: ObjectContext? {
        checkAccess { "\(Self.entityName).managedObjectContext" }
        return link?.context
    }

    /// Inserted into its context and not saved yet; false again once the object is deleted
    /// before a save (it will never be written), as in Core Data.
    public final var isInserted: Bool { state.contains(.inserted) && !state.contains(.deleted) }
    /// Changed since the last save.
    public final var isUpdated: Bool { state.contains(.updated) }
    /// Marked for deletion at the next save, or deleted by a save.
    public final var isDeleted: Bool { state.contains(.deleted) }
    /// Inserted, updated or deleted and not saved yet; false for an object inserted and deleted
    /// again before a save, which is never written (its ``isDeleted`` stays true).
    public final var hasChanges: Bool {
        if state.isSuperset(of: [.inserted, .deleted]) { return false }
        return !state.intersection([.inserted, .updated, .deleted, .touched]).isEmpty
    }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    open var description: String {
        let id = key > 0 ? "p\(key)" : "t\(temporarySerial)"
        return "<\(Self.entityName) \(id)>"
    }

    /// Stops the program when the object is used outside its context's `perform`.
    @inline(__always)
    final func checkAccess(_ api: () -> String) {
        let current = CurrentThread.id
        guard let owner = link?.ownerThread.load(ordering: .relaxed) else { return }
        if owner != current {
            Misuse.fail(
                """
                \(api()) was used outside its context's perform { }. Objects are confined to the perform call of \
                the context that fetched or inserted them: move this code inside `try await context.perform { … \
                }` and pass object IDs, not objects, between operations.
                """
            )
        }
    }

    /// The model, resolving it for objects not yet inserted.
    @inline(__always)
    final var resolvedModel: EntityModel { resolvedModelReference.model }

    /// The model's reference, resolving the model for objects not yet inserted.
    @inline(__always)
    final var resolvedModelReference: ModelReference {
        if let modelReference { return modelReference }
        return resolveModel()
    }

    @inline(never)
    private final func resolveModel() -> ModelReference {
        do {
            let model = try ModelRegistry.model(for: type(of: self))
            self.model = model
            detach(model.defaults)
            return ModelReference(model, for: self)
        } catch {
            Misuse.fail("\(Self.self) cannot be used as an entity: \(error)")
        }
    }

    /// The property declared at `site` (see ``PropertySite``). On a prototype, also records
    /// the access, with the key path used when the accessor passes one (writes and projections).
    @usableFromInline
    final func property(site: UInt32, accessedAs keyPath: AnyKeyPath?) -> Int {
        let model = resolvedModelReference
        guard let index = model.propertyIndex(forSite: site) else {
            Misuse.fail("\(Self.self): a property wrapper was used on an object that does not declare it")
        }
        if state.contains(.prototype) { model.model.recordPrototypeAccess(index, keyPath: keyPath) }
        return index
    }

    /// `Entity.property`, for messages.
    final func propertyName(_ property: Int) -> String {
        "\(resolvedModel.name).\(resolvedModel.properties[property].name)"
    }

    /// Reads an attribute column.
    @inline(__always)
    final func readColumn(_ property: Int) -> StoredValue {
        // The object's model outlives it, so reading through it needs no retain.
        let column = resolvedModelReference.column(ofProperty: property)
        checkAccess { propertyName(property) }
        return slots[column]
    }

    /// The fast path of an attribute read: the slot holding the value of the attribute declared
    /// at `site`, or nil when the slow path must run (a prototype, or an object without a model
    /// yet). The accessor converts the value in place, so that reading it copies nothing but the
    /// result; the slot lives as long as the object.
    @usableFromInline
    final func fastReadSlot(site: UInt32) -> ValueSlot? {
        guard let column = fastColumn(site: site) else { return nil }
        checkAccess { propertyName(resolvedModel.columnProperties[column]) }
        return slots.slot(column)
    }

    /// The fast path of an attribute write; false when the slow path must run (as for reads).
    @usableFromInline
    final func fastWriteColumn(site: UInt32, _ value: StoredValue) -> Bool {
        guard let column = fastColumn(site: site) else { return false }
        checkAccess { propertyName(resolvedModel.columnProperties[column]) }
        setColumn(column, value)
        return true
    }

    /// The index of the property declared at `site`, or nil when the slow path must run (as
    /// for ``fastReadSlot(site:)``).
    @usableFromInline
    final func fastPropertyIndex(site: UInt32) -> Int? {
        guard let modelReference, !state.contains(.prototype) else { return nil }
        return modelReference.propertyIndex(forSite: site)
    }

    @inline(__always)
    private final func fastColumn(site: UInt32) -> Int? {
        guard let modelReference, !state.contains(.prototype) else { return nil }
        return modelReference.column(forSite: site)
    }

    /// Writes an attribute column, tracking the change.
    final func writeColumn(_ property: Int, _ value: StoredValue) {
        let column = resolvedModelReference.column(ofProperty: property)
        checkAccess { propertyName(property) }
        if state.contains(.prototype) { return }
        setColumn(column, value)
    }

    /// Sets a column and marks the object updated (saved objects only).
    final func setColumn(_ column: Int, _ value: StoredValue) {
        if !state.contains(.inserted), let link {
            if committedValues == nil { committedValues = slots.array }
            if !state.contains(.updated) {
                state.insert(.updated)
                link.context?.registerUpdate(self)
            }
        }
        slots[column] = value
    }

    /// The column values, in place; empty while the object has no model. Every object with a
    /// model has one slot per column of it. Use it while holding the object (see ``ValueSlots``).
    final var values: ValueSlots { slots }

    /// Overwrites every column value with `newValues`, a row of this entity (callers check its
    /// length with ``ObjectContext/checkShape(_:of:)``; only as many values as the object has
    /// slots are ever written).
    final func replaceValues(with newValues: ContiguousArray<StoredValue>) {
        let values = values
        for column in 0..<min(values.count, newValues.count) { values[column] = newValues[column] }
    }

    /// Whether the values equal those kept at the first change (false when none are kept).
    final var hasUnchangedValues: Bool {
        guard let committedValues else { return false }
        return committedValues.elementsEqual(values)
    }

    /// Gives an object outside a context its own slots, holding `initialValues`.
    final func detach(_ initialValues: ContiguousArray<StoredValue>) {
        let storage = DetachedValues(initialValues)
        detachedValues = storage
        slots = storage.slots
    }
}

/// Per-object change-tracking flags.
struct ObjectState: OptionSet {
    let rawValue: UInt16
    static let inserted = ObjectState(rawValue: 1 << 0)
    static let updated = ObjectState(rawValue: 1 << 1)
    static let deleted = ObjectState(rawValue: 1 << 2)
    /// A to-many relationship changed: the row's version must be bumped at save.
    static let touched = ObjectState(rawValue: 1 << 3)
    /// A to-one relationship changed in memory since the last save.
    static let relationDirty = ObjectState(rawValue: 1 << 4)
    static let prototype = ObjectState(rawValue: 1 << 5)
    /// The object was deleted by a save and no longer belongs to the store.
    static let gone = ObjectState(rawValue: 1 << 6)
}

/// A model class's declared index or multi-attribute uniqueness constraint.
public struct EntityIndex: @unchecked Sendable {
    let keyPaths: [AnyKeyPath]
    let isUnique: Bool

    /// An index over the given attributes, most significant first.
    public static func index(_ keyPaths: AnyKeyPath...) -> EntityIndex {
        EntityIndex(keyPaths: keyPaths, isUnique: false)
    }

    /// A uniqueness constraint over the given attributes taken together.
    public static func unique(_ keyPaths: AnyKeyPath...) -> EntityIndex {
        EntityIndex(keyPaths: keyPaths, isUnique: true)
    }
}

/// Program-stopping misuse reports, in one place so the wording stays consistent.
enum Misuse {
    static func fail(_ message: String) -> Never {
        fatalError("Strata misuse: \(message)")
    }
}

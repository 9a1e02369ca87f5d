import Foundation
import StrataStorage
import Synchronization

/// Everything Strata knows about one model class, built once per process by reflection.
///
/// Properties are the `@Attribute` and `@Relationship` wrappers in declaration order (base
/// class first). Attributes and to-one relationships own a column; to-many relationships do
/// not. A model is immutable once published by ``ModelRegistry``, except for the key-path
/// cache used by predicates and sorts (under the registry lock). Property accessors find their
/// column by the wrapper's declaration site (see ``PropertySite``).
///
/// This file holds the model's tables and the lookups on them; building is in
/// `EntityModel+Declarations.swift` (reading the class), `EntityModel+PropertyTables.swift`
/// (laying out properties and columns) and `EntityModel+Validation.swift` (the checks), key
/// paths in `EntityModel+KeyPaths.swift`, relationships in `ModelRegistry+Relations.swift`.
final class EntityModel: @unchecked Sendable {
    let type: ManagedObject.Type
    let name: String
    let properties: [PropertyModel]
    /// Column number → property index.
    let columnProperties: [Int]
    /// How many properties the entity has.
    let propertyCount: Int
    /// Property index → its column, or -1 (to-many relationships). Read on every attribute
    /// access (a `let`, so the read costs no reference counting).
    private let columnTable: ContiguousArray<Int>
    /// Column defaults for new objects.
    let defaults: ContiguousArray<StoredValue>
    /// Per property: an attribute's declared default as its Swift type (nil for relationships).
    private let typedDefaults: [(any Sendable)?]
    let declaredIndexes: [EntityIndex]
    /// Attribute name → the name older stores have for it (`@Attribute(originalName:)`).
    let originalAttributeNames: [String: String]
    /// The entity's name in older stores (``ManagedObject/originalEntityName``), if renamed.
    let originalName: String?
    /// The raw-value and Codable columns, whose stored values are checked as rows load (empty
    /// for an entity of scalars only).
    let checkedColumns: [CheckedColumn]
    /// The columns of attributes marked ``AttributeOptions/preserveAfterDeletion``, whose values a
    /// deleted object's history tombstone keeps.
    let preservedColumns: [Int]
    /// Filled by the registry before the model is published (`ModelRegistry+Relations.swift`);
    /// read-only afterwards.
    var relations: [RelationModel?]
    /// Prototype instance used to map key paths to properties (under ``ModelRegistry/lock``).
    let prototype: ManagedObject
    /// Per property: its declaration site (see ``PropertySite``). One flat block of words,
    /// scanned on every property access.
    private let sites: ContiguousArray<UInt32>
    /// Set by ``ModelRegistry`` when it publishes the model, which it then keeps for the rest
    /// of the process (what ``ModelReference`` relies on).
    private let published = Atomic<Bool>(false)
    /// While a key path is evaluated on the prototype: the properties it read, with the key
    /// path used (under the registry lock; `EntityModel+KeyPaths.swift`).
    var recordedAccesses: [(property: Int, keyPath: AnyKeyPath?)]?
    /// Key path → property index, for predicates, sorts and inverses (under the registry lock;
    /// `EntityModel+KeyPaths.swift`).
    var keyPathCache: [AnyKeyPath: Int?] = [:]

    var columnCount: Int { columnProperties.count }

    /// Whether the entity has a to-many relationship (whose faults a fetch result can batch).
    var hasToMany: Bool { relations.contains { $0?.isToMany == true } }

    /// Builds the model of `type`, in steps: check the entity's name, read what the class
    /// declares (its prototype and a twin), lay out its properties and columns (checking each
    /// declaration), then check what needs every property (distinct sites, allowed names).
    /// Only ``ModelRegistry`` calls it; the relationships are resolved there.
    /// - Throws: `.invalidSchema`, naming the entity or property and what to change.
    init(type: ManagedObject.Type) throws(StrataError) {
        self.type = type
        self.name = type.entityName
        try Self.checkEntityName(name)
        let declarations = Declarations(of: type)
        let tables = try PropertyTables(entity: name, declarations: declarations)
        try Self.checkDistinctSites(tables.sites, of: tables.properties, entity: name)
        try Self.checkPropertyNames(tables.properties, entity: name)
        self.properties = tables.properties
        self.columnProperties = tables.columnProperties
        self.propertyCount = tables.properties.count
        self.columnTable = tables.columnTable
        self.defaults = tables.defaults
        self.typedDefaults = tables.typedDefaults
        self.declaredIndexes = type.indexes
        self.originalAttributeNames = tables.originalNames
        self.originalName = type.originalEntityName
        self.checkedColumns = tables.checkedColumns
        self.preservedColumns = tables.preservedColumns
        self.relations = Array(repeating: nil, count: tables.properties.count)
        self.prototype = declarations.prototype
        self.sites = ContiguousArray(tables.sites)
        prototype.model = self
        prototype.detach(defaults)
    }

    /// Whether ``ModelRegistry`` has published the model (and so keeps it for good).
    var isPublished: Bool { published.load(ordering: .acquiring) }

    /// Marks the model published; only ``ModelRegistry`` calls it, as it publishes the model.
    func markPublished() { published.store(true, ordering: .releasing) }

    /// The column of property `index` (-1 for a to-many relationship).
    @inline(__always)
    func column(ofProperty index: Int) -> Int {
        precondition(index >= 0 && index < propertyCount, "property index out of range")
        return columnTable[index]
    }

    /// The declared default of attribute `property`, as the property's Swift type.
    func typedDefault(ofProperty property: Int) -> any Sendable {
        guard let value = typedDefaults[property] else {
            fatalError("Strata: property \(property) of \(name) is not an attribute")
        }
        return value
    }

    /// The property declared at `site`, if this entity declares it: a scan of a few words.
    @inline(__always)
    func propertyIndex(forSite site: UInt32) -> Int? {
        sites.firstIndex(of: site)
    }

    /// The column of the attribute or to-one relationship declared at `site` (nil when this
    /// entity does not declare it, and for to-many relationships).
    @inline(__always)
    func column(forSite site: UInt32) -> Int? {
        guard let index = propertyIndex(forSite: site) else { return nil }
        let column = columnTable[index]
        return column >= 0 ? column : nil
    }

    /// The index of the property called `name`.
    func propertyIndex(named name: String) -> Int? {
        properties.firstIndex { $0.name == name }
    }
}

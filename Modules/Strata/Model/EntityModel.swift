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
    /// Filled by the registry before the model is published; read-only afterwards.
    fileprivate(set) var relations: [RelationModel?]
    /// Prototype instance used to map key paths to properties (under ``ModelRegistry/lock``).
    let prototype: ManagedObject
    /// Per property: its declaration site (see ``PropertySite``). One flat block of words,
    /// scanned on every property access.
    private let sites: ContiguousArray<UInt32>
    /// Set by ``ModelRegistry`` when it publishes the model, which it then keeps for the rest
    /// of the process (what ``ModelReference`` relies on).
    private let published = Atomic<Bool>(false)
    /// While a key path is evaluated on the prototype: the properties it read, with the key
    /// path used (under the registry lock).
    private var recordedAccesses: [(property: Int, keyPath: AnyKeyPath?)]?
    /// Key path → property index, for predicates, sorts and inverses (under the registry lock).
    private var keyPathCache: [AnyKeyPath: Int?] = [:]

    var columnCount: Int { columnProperties.count }

    /// Whether the entity has a to-many relationship (whose faults a fetch result can batch).
    var hasToMany: Bool { relations.contains { $0?.isToMany == true } }

    fileprivate init(type: ManagedObject.Type) throws(StrataError) {
        self.type = type
        self.name = type.entityName
        guard name.utf8.count <= Schema.longestName else {
            throw .invalidSchema(
                """
                entity name \(String(reflecting: name)) has \(name.utf8.count) bytes, and PostgreSQL keeps \
                \(Schema.longestName); shorten it
                """)
        }
        guard EntityName.isValid(name) else {
            throw .invalidSchema(
                """
                entity name \(String(reflecting: name)) must be ASCII letters, digits and _, not starting with a \
                digit
                """)
        }
        let (prototype, captured) = DeclarationCapture.capture { type.init() }
        prototype.state.insert(.prototype)
        let (twin, twinCaptured) = DeclarationCapture.capture { type.init() }
        let declared = Self.declarations(of: prototype)
        let twinDeclared = Self.declarations(of: twin)
        var properties: [PropertyModel] = []
        var columnProperties: [Int] = []
        var defaults = ContiguousArray<StoredValue>()
        var typedDefaults: [(any Sendable)?] = []
        var sites: [UInt32] = []
        var checkedColumns: [CheckedColumn] = []
        var originalNames: [String: String] = [:]
        for (index, (label, value)) in declared.enumerated() {
            let propertyName = label.hasPrefix("_") ? String(label.dropFirst()) : label
            if let attribute = value as? any AttributeWrapper {
                guard
                    case .attribute(let defaultValue, let typedDefault, let options, let originalName)? =
                        captured[attribute.site]
                else {
                    throw .invalidSchema(
                        "\(type.entityName).\(propertyName): its @Attribute declaration could not be read")
                }
                var twinDefault: StoredValue?
                if let twinAttribute = twinDeclared[index].1 as? any AttributeWrapper,
                    case .attribute(let value, _, _, _)? = twinCaptured[twinAttribute.site]
                {
                    twinDefault = value
                }
                guard twinDefault == defaultValue else {
                    throw .invalidSchema(
                        """
                        \(type.entityName).\(propertyName) has a default that changes per instance (such as \
                        Date() or UUID()); give it a constant default and set the value in awakeFromInsert()
                        """
                    )
                }
                if case .real(let v) = defaultValue, v.isNaN {
                    throw .invalidSchema("\(type.entityName).\(propertyName) defaults to NaN, which cannot be stored")
                }
                if let checked = (attribute as? any CheckedAttributeWrapper)?.checkedColumn(columnProperties.count) {
                    try Self.checkDeclaration(options, defaultValue, of: checked, "\(type.entityName).\(propertyName)")
                    checkedColumns.append(checked)
                }
                properties.append(
                    PropertyModel(
                        name: propertyName, column: columnProperties.count,
                        kind: .attribute(attribute.columnType, isOptional: attribute.isOptional, options: options)))
                if let originalName, originalName != propertyName { originalNames[propertyName] = originalName }
                columnProperties.append(index)
                defaults.append(defaultValue)
                typedDefaults.append(typedDefault)
                sites.append(attribute.site)
            } else if let wrapper = value as? any RelationshipWrapper {
                guard case .relationship(let inverse, let deleteRule)? = captured[wrapper.site] else {
                    throw .invalidSchema(
                        "\(type.entityName).\(propertyName): its @Relationship declaration could not be read")
                }
                let relationship = RelationshipDeclaration(
                    targetType: wrapper.targetType, isToMany: wrapper.isToMany, inverseKeyPath: inverse,
                    declaredDeleteRule: deleteRule)
                var column: Int?
                if !relationship.isToMany {
                    column = columnProperties.count
                    columnProperties.append(index)
                    defaults.append(.null)
                }
                properties.append(PropertyModel(name: propertyName, column: column, kind: .relationship(relationship)))
                typedDefaults.append(nil)
                sites.append(wrapper.site)
            }
        }
        if let clash = Self.firstSiteClash(sites, properties) {
            throw .invalidSchema(
                """
                \(type.entityName): \(clash.0) and \(clash.1) have the same declaration site (the same reported \
                #fileID, #line and #column, as generated code with one #sourceLocation gives, or a \
                one-in-billions hash collision): declare them on different lines, or pass one of them an explicit \
                _line: or _column: argument
                """
            )
        }
        for property in properties
        where !EntityName.isValid(property.name) || property.name == "id" || property.name == "version" {
            throw .invalidSchema(
                """
                \(type.entityName).\(property.name): property names must be ASCII identifiers other than id and \
                version
                """
            )
        }
        self.properties = properties
        self.columnProperties = columnProperties
        self.propertyCount = properties.count
        self.columnTable = ContiguousArray(properties.map { $0.column ?? -1 })
        self.defaults = defaults
        self.typedDefaults = typedDefaults
        self.declaredIndexes = type.indexes
        self.originalAttributeNames = originalNames
        self.originalName = type.originalEntityName
        self.checkedColumns = checkedColumns
        self.preservedColumns = properties.compactMap { property in
            guard case .attribute(_, _, let options) = property.kind, options.contains(.preserveAfterDeletion) else {
                return nil
            }
            return property.column
        }
        self.relations = Array(repeating: nil, count: properties.count)
        self.prototype = prototype
        self.sites = ContiguousArray(sites)
        prototype.model = self
        prototype.detach(defaults)
    }

    /// Whether ``ModelRegistry`` has published the model (and so keeps it for good).
    var isPublished: Bool { published.load(ordering: .acquiring) }

    /// Marks the model published; only ``ModelRegistry`` calls it, as it publishes the model.
    fileprivate func markPublished() { published.store(true, ordering: .releasing) }

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

    /// The names of the first two properties that share a site, if any do.
    private static func firstSiteClash(_ sites: [UInt32], _ properties: [PropertyModel]) -> (String, String)? {
        var seen: [UInt32: Int] = [:]
        for (index, site) in sites.enumerated() {
            if let earlier = seen.updateValue(index, forKey: site) {
                return (properties[earlier].name, properties[index].name)
            }
        }
        return nil
    }

    /// The wrapper-backed stored properties of an instance, base class first.
    private static func declarations(of object: ManagedObject) -> [(String, Any)] {
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror, current.subjectType != ManagedObject.self {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        return mirrors.reversed().flatMap { mirror in
            mirror.children.compactMap { child -> (String, Any)? in
                guard let label = child.label,
                    child.value is any AttributeWrapper || child.value is any RelationshipWrapper
                else { return nil }
                return (label, child.value)
            }
        }
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

    /// The property a key path such as `\Account.balance` (or `\Transaction.$account`) names,
    /// or nil when it is not a single stored property of this entity. Answers, nil included,
    /// are cached.
    ///
    /// The key path is applied to the prototype, whose accessors record what they touch.
    /// Projections record the key path they were reached through; getters do not (so that reads
    /// never form key paths), setters do. So when the read touched exactly one property, through
    /// a getter, and the key path is writable, its value is written back (which changes nothing
    /// on a prototype) to learn the key path the setter sees. The answer is property `p` when
    /// `p` is the only property touched and the one recorded key path is this one, so a
    /// computed property is never taken for the attribute it reads. (Such a computed property's
    /// setter therefore runs once, on the prototype, with the value its getter returned.)
    func propertyIndex(forKeyPath keyPath: AnyKeyPath) -> Int? {
        ModelRegistry.withLock {
            if let cached = keyPathCache[keyPath] { return cached }
            guard Swift.type(of: keyPath).rootType == self.type else { return nil }
            recordedAccesses = []
            _ = prototype[keyPath: keyPath]
            var accesses = recordedAccesses ?? []
            if accesses.count == 1, accesses[0].keyPath == nil, let writable = keyPath as? any PrototypeWritableKeyPath
            {
                recordedAccesses = []
                writable.writeBack(on: prototype)
                accesses = recordedAccesses ?? []
            }
            recordedAccesses = nil
            let named = accesses.filter { $0.keyPath != nil }
            var answer: Int?
            if named.count == 1, let only = named.first, only.keyPath == keyPath,
                accesses.allSatisfy({ $0.property == only.property })
            {
                answer = only.property
            }
            keyPathCache[keyPath] = .some(answer)
            return answer
        }
    }

    /// Notes that the prototype read `property` through `keyPath`, when a key path is being mapped.
    func recordPrototypeAccess(_ property: Int, keyPath: AnyKeyPath?) {
        ModelRegistry.withLock { recordedAccesses?.append((property, keyPath)) }
    }

    /// The index of the property called `name`.
    func propertyIndex(named name: String) -> Int? {
        properties.firstIndex { $0.name == name }
    }
}

/// A key path the schema builder can write through, on a prototype, to learn which property
/// it names.
private protocol PrototypeWritableKeyPath {
    func writeBack(on prototype: ManagedObject)
}

extension ReferenceWritableKeyPath: PrototypeWritableKeyPath {
    /// Reads the value and writes it back (prototype writes change nothing).
    fileprivate func writeBack(on prototype: ManagedObject) {
        guard let root = prototype as? Root else { return }
        root[keyPath: self] = root[keyPath: self]
    }
}

/// A declared property of an entity.
///
/// A class, so that reading one from `EntityModel.properties` on every attribute access is
/// one pointer load rather than a copy of its name and relationship declaration.
final class PropertyModel {
    enum Kind {
        case attribute(ColumnType, isOptional: Bool, options: AttributeOptions)
        case relationship(RelationshipDeclaration)
    }

    let name: String
    /// The column this property owns (attributes and to-one relationships).
    let column: Int?
    let kind: Kind
    let isRelationship: Bool

    init(name: String, column: Int?, kind: Kind) {
        self.name = name
        self.column = column
        self.kind = kind
        if case .relationship = kind { isRelationship = true } else { isRelationship = false }
    }
}

/// A relationship with its inverse resolved (a class for the same reason as ``PropertyModel``).
final class RelationModel {
    let property: Int
    let target: EntityModel
    let inverseProperty: Int
    let isToMany: Bool
    let inverseIsToMany: Bool
    let deleteRule: DeleteRule
    /// For many-to-many: the join name, and whether this side is the join's left side.
    let joinName: String?
    let isJoinLeft: Bool

    init(
        property: Int, target: EntityModel, inverseProperty: Int, isToMany: Bool, inverseIsToMany: Bool,
        deleteRule: DeleteRule, joinName: String?, isJoinLeft: Bool
    ) {
        self.property = property
        self.target = target
        self.inverseProperty = inverseProperty
        self.isToMany = isToMany
        self.inverseIsToMany = inverseIsToMany
        self.deleteRule = deleteRule
        self.joinName = joinName
        self.isJoinLeft = isJoinLeft
    }
}

/// The process-wide cache of entity models, one per model class.
enum ModelRegistry {
    /// The registry's tables, guarded by one recursive lock (building a model evaluates key
    /// paths on prototypes, which asks the registry again).
    private final class Tables: @unchecked Sendable {
        let lock = NSRecursiveLock()
        /// Published models; never removed (``ModelReference`` relies on it).
        var models: [ObjectIdentifier: EntityModel] = [:]
        /// Models being built (published or not), so prototypes can reach related prototypes.
        var building: [ObjectIdentifier: EntityModel] = [:]
    }

    private static let tables = Tables()
    private static var lock: NSRecursiveLock { tables.lock }
    /// Read and written only under ``lock``.
    private static var models: [ObjectIdentifier: EntityModel] {
        get { tables.models }
        _modify { yield &tables.models }
    }
    /// Read and written only under ``lock``.
    private static var building: [ObjectIdentifier: EntityModel] {
        get { tables.building }
        _modify { yield &tables.building }
        set { tables.building = newValue }
    }

    /// The prototype of a related class, for evaluating key paths that go through a to-one
    /// relationship on a prototype. Nil when the class has no model yet.
    static func prototype(for type: ManagedObject.Type) -> ManagedObject? {
        withLock { (models[ObjectIdentifier(type)] ?? building[ObjectIdentifier(type)])?.prototype }
    }

    static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// The published model for a class, building it (and every class its relationships
    /// reach) on first use.
    static func model(for type: ManagedObject.Type) throws(StrataError) -> EntityModel {
        do {
            return try withLock {
                if let model = models[ObjectIdentifier(type)] { return model }
                var pending: [EntityModel] = []
                defer { building = [:] }
                let model = try build(type, pending: &pending)
                var index = 0
                while index < pending.count {
                    try resolveRelations(of: pending[index], pending: &pending)
                    index += 1
                }
                for candidate in pending {
                    candidate.markPublished()
                    models[ObjectIdentifier(candidate.type)] = candidate
                }
                return model
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw .invalidSchema(String(describing: error))
        }
    }

    private static func build(_ type: ManagedObject.Type, pending: inout [EntityModel]) throws -> EntityModel {
        if let model = models[ObjectIdentifier(type)] ?? pending.first(where: { $0.type == type }) { return model }
        let model = try EntityModel(type: type)
        pending.append(model)
        building[ObjectIdentifier(type)] = model
        return model
    }

    private static func resolveRelations(of model: EntityModel, pending: inout [EntityModel]) throws {
        for (index, property) in model.properties.enumerated() {
            guard case .relationship(let declaration) = property.kind else { continue }
            let target = try build(declaration.targetType, pending: &pending)
            let place = "\(model.name).\(property.name)"
            let inverseIndex = try inverseProperty(
                of: index, in: model, declaration: declaration, target: target, place: place)
            guard case .relationship(let inverse) = target.properties[inverseIndex].kind else {
                throw StrataError.invalidSchema(
                    "\(place): its inverse must be a @Relationship property of \(target.name)")
            }
            guard inverse.targetType == model.type else {
                throw StrataError.invalidSchema(
                    """
                    \(place): its inverse \(target.name).\(target.properties[inverseIndex].name) points at \
                    \(inverse.targetType), not \(model.name)
                    """
                )
            }
            var joinName: String?
            var isLeft = false
            if declaration.isToMany && inverse.isToMany {
                let mine = "\(model.name)_\(property.name)"
                let theirs = "\(target.name)_\(target.properties[inverseIndex].name)"
                isLeft = mine <= theirs
                joinName = isLeft ? "\(mine)__\(theirs)" : "\(theirs)__\(mine)"
            }
            model.relations[index] = RelationModel(
                property: index, target: target, inverseProperty: inverseIndex,
                isToMany: declaration.isToMany, inverseIsToMany: inverse.isToMany,
                deleteRule: declaration.declaredDeleteRule, joinName: joinName, isJoinLeft: isLeft)
        }
    }

    /// The inverse of a relationship: the one it names, or the one on the target that names it.
    private static func inverseProperty(
        of index: Int, in model: EntityModel, declaration: RelationshipDeclaration, target: EntityModel, place: String
    ) throws -> Int {
        if let inverseKeyPath = declaration.inverseKeyPath {
            guard let inverseIndex = target.propertyIndex(forKeyPath: inverseKeyPath),
                target.properties[inverseIndex].isRelationship
            else {
                throw StrataError.invalidSchema(
                    "\(place): its inverse must be a @Relationship property of \(target.name)")
            }
            if case .relationship(let inverse) = target.properties[inverseIndex].kind,
                let back = inverse.inverseKeyPath,
                model.propertyIndex(forKeyPath: back) != index
            {
                throw StrataError.invalidSchema(
                    "\(place) and \(target.name).\(target.properties[inverseIndex].name) name different inverses")
            }
            return inverseIndex
        }
        let naming = target.properties.indices.filter { candidate in
            guard case .relationship(let other) = target.properties[candidate].kind, other.targetType == model.type,
                let back = other.inverseKeyPath
            else { return false }
            return model.propertyIndex(forKeyPath: back) == index
        }
        guard naming.count == 1 else {
            throw StrataError.invalidSchema(
                "\(place) has no inverse: name it on one side, e.g. @Relationship(inverse: \\\(target.name).property)")
        }
        return naming[0]
    }
}

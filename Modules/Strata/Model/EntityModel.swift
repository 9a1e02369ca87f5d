import Foundation
import Synchronization

/// Everything Strata knows about one model class, built once per process by reflection.
///
/// Properties are the `@Attribute` and `@Relationship` wrappers in declaration order (base
/// class first). Attributes and to-one relationships own a column; to-many relationships do
/// not. A model is immutable once published by ``ModelRegistry``, except for the lock-free
/// storage-key-path cache that makes property access cheap.
final class EntityModel: @unchecked Sendable {
    let type: ManagedObject.Type
    let name: String
    let properties: [PropertyModel]
    /// Column number → property index.
    let columnProperties: [Int]
    /// How many properties the entity has.
    let propertyCount: Int
    /// Property index → its column, or -1 (to-many relationships). Read on every attribute
    /// access, through a plain pointer so that the read costs no reference counting.
    private let columnTable: UnsafeMutablePointer<Int>
    /// Column defaults for new objects.
    let defaults: ContiguousArray<StoredValue>
    let declaredIndexes: [EntityIndex]
    /// Filled by the registry before the model is published; read-only afterwards.
    fileprivate(set) var relations: [RelationModel?]
    /// Prototype instance used to map key paths to properties (under ``ModelRegistry/lock``).
    let prototype: ManagedObject
    /// Per property: the identity of the storage key path the wrapper passes, 0 until seen.
    /// One flat block of atomic words, scanned on every property access.
    private let storageIDs: UnsafeMutablePointer<Atomic<UInt>>
    /// Key path → property index, for predicates, sorts and inverses (under the registry lock).
    private var keyPathCache: [AnyKeyPath: Int] = [:]
    /// Per property, the storage key path whose identity is in `storageIDs`, kept alive so that
    /// its address cannot be reused by another key path while the slot holds it (under the
    /// registry lock).
    private var storageKeyPaths: [AnyKeyPath?]

    var columnCount: Int { columnProperties.count }

    fileprivate init(type: ManagedObject.Type) throws(StrataError) {
        self.type = type
        self.name = type.entityName
        guard EntityName.isValid(name) else {
            throw .invalidSchema("entity name \(String(reflecting: name)) must be ASCII letters, digits and _")
        }
        let prototype = type.init()
        prototype.state.insert(.prototype)
        let twin = type.init()
        let declared = Self.declarations(of: prototype)
        let twinDeclared = Self.declarations(of: twin)
        var properties: [PropertyModel] = []
        var columnProperties: [Int] = []
        var defaults = ContiguousArray<StoredValue>()
        for (index, (label, value)) in declared.enumerated() {
            let propertyName = label.hasPrefix("_") ? String(label.dropFirst()) : label
            if let attribute = value as? any AttributeDeclaration {
                let twinDefault = (twinDeclared[index].1 as? any AttributeDeclaration)?.defaultStoredValue
                guard twinDefault == attribute.defaultStoredValue else {
                    throw .invalidSchema("\(type.entityName).\(propertyName) has a default that changes per instance (such as Date() or UUID()); give it a constant default and set the value in awakeFromInsert()")
                }
                if case .real(let v) = attribute.defaultStoredValue, v.isNaN {
                    throw .invalidSchema("\(type.entityName).\(propertyName) defaults to NaN, which cannot be stored")
                }
                properties.append(PropertyModel(name: propertyName, column: columnProperties.count, kind: .attribute(attribute.columnType, isOptional: attribute.isOptional, options: attribute.declaredOptions)))
                columnProperties.append(index)
                defaults.append(attribute.defaultStoredValue)
            } else if let relationship = value as? any RelationshipDeclaration {
                var column: Int?
                if !relationship.isToMany {
                    column = columnProperties.count
                    columnProperties.append(index)
                    defaults.append(.null)
                }
                properties.append(PropertyModel(name: propertyName, column: column, kind: .relationship(relationship)))
            }
        }
        for property in properties where !EntityName.isValid(property.name) || property.name == "id" || property.name == "version" {
            throw .invalidSchema("\(type.entityName).\(property.name): property names must be ASCII identifiers other than id and version")
        }
        self.properties = properties
        self.columnProperties = columnProperties
        self.propertyCount = properties.count
        self.columnTable = .allocate(capacity: max(properties.count, 1))
        for (index, property) in properties.enumerated() { (columnTable + index).initialize(to: property.column ?? -1) }
        self.defaults = defaults
        self.declaredIndexes = type.indexes
        self.relations = Array(repeating: nil, count: properties.count)
        self.prototype = prototype
        self.storageIDs = .allocate(capacity: max(properties.count, 1))
        self.storageKeyPaths = Array(repeating: nil, count: properties.count)
        for index in properties.indices { (storageIDs + index).initialize(to: Atomic(0)) }
        prototype.model = self
        prototype.values = defaults
    }

    deinit {
        storageIDs.deinitialize(count: propertyCount)
        storageIDs.deallocate()
        columnTable.deallocate()
    }

    /// The column of property `index` (-1 for a to-many relationship).
    @inline(__always)
    func column(ofProperty index: Int) -> Int {
        precondition(index >= 0 && index < propertyCount, "property index out of range")
        return columnTable[index]
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
                guard let label = child.label, child.value is any PropertyProbe else { return nil }
                return (label, child.value)
            }
        }
    }

    /// The property a wrapper's storage key path belongs to: a lock-free scan after the first use.
    @inline(__always)
    func propertyIndex<Object: ManagedObject, Wrapper: PropertyProbe>(forStorage keyPath: ReferenceWritableKeyPath<Object, Wrapper>) -> Int {
        let id = UInt(bitPattern: ObjectIdentifier(keyPath))
        return cachedPropertyIndex(forStorage: id) ?? resolveStorage(keyPath, id: id)
    }

    /// The property whose storage key path has identity `id`, if that key path has been seen.
    @inline(__always)
    func cachedPropertyIndex(forStorage id: UInt) -> Int? {
        for index in 0..<propertyCount where storageIDs[index].load(ordering: .relaxed) == id {
            return index
        }
        return nil
    }

    /// The column of the attribute whose storage key path has identity `id`, if that key path
    /// has been seen before (nil otherwise, and for to-many relationships).
    @inline(__always)
    func cachedColumn(forStorage id: UInt) -> Int? {
        guard let index = cachedPropertyIndex(forStorage: id) else { return nil }
        let column = columnTable[index]
        return column >= 0 ? column : nil
    }

    private func resolveStorage<Object: ManagedObject, Wrapper: PropertyProbe>(_ keyPath: ReferenceWritableKeyPath<Object, Wrapper>, id: UInt) -> Int {
        ModelRegistry.withLock {
            guard let prototype = prototype as? Object else {
                fatalError("Strata: \(Object.self) is not the entity \(name); entity subclasses of entities are not supported")
            }
            prototype[keyPath: keyPath].isProbed = true
            defer { prototype[keyPath: keyPath].isProbed = false }
            let declared = Self.declarations(of: prototype)
            guard let index = declared.firstIndex(where: { ($0.1 as? any PropertyProbe)?.isProbed == true }) else {
                fatalError("Strata: could not map a property wrapper of \(name) to its declaration")
            }
            storageKeyPaths[index] = keyPath
            storageIDs[index].store(id, ordering: .relaxed)
            return index
        }
    }

    /// The property a key path such as `\Account.balance` (or `\Transaction.$account`) reads,
    /// or nil when it is not a single stored property of this entity.
    func propertyIndex(forKeyPath keyPath: AnyKeyPath) -> Int? {
        ModelRegistry.withLock {
            if let cached = keyPathCache[keyPath] { return cached }
            guard Swift.type(of: keyPath).rootType == self.type else { return nil }
            prototype.recordedAccesses = []
            _ = prototype[keyPath: keyPath]
            let accesses = prototype.recordedAccesses ?? []
            prototype.recordedAccesses = nil
            guard accesses.count == 1, let only = accesses.first, only.keyPath == keyPath else { return nil }
            keyPathCache[keyPath] = only.property
            return only.property
        }
    }

    /// The index of the property called `name`.
    func propertyIndex(named name: String) -> Int? {
        properties.firstIndex { $0.name == name }
    }
}

/// A declared property of an entity.
///
/// A class, so that reading one from `EntityModel.properties` on every attribute access is
/// one pointer load rather than a copy of its name and relationship declaration.
final class PropertyModel {
    enum Kind {
        case attribute(ColumnType, isOptional: Bool, options: AttributeOptions)
        case relationship(any RelationshipDeclaration)
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
    private static let lock = NSRecursiveLock()
    nonisolated(unsafe) private static var models: [ObjectIdentifier: EntityModel] = [:]
    /// Models being built (published or not), so prototypes can reach related prototypes.
    nonisolated(unsafe) private static var building: [ObjectIdentifier: EntityModel] = [:]

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
                for candidate in pending { models[ObjectIdentifier(candidate.type)] = candidate }
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
            let inverseIndex = try inverseProperty(of: index, in: model, declaration: declaration, target: target, place: place)
            guard case .relationship(let inverse) = target.properties[inverseIndex].kind else {
                throw StrataError.invalidSchema("\(place): its inverse must be a @Relationship property of \(target.name)")
            }
            guard inverse.targetType == model.type else {
                throw StrataError.invalidSchema("\(place): its inverse \(target.name).\(target.properties[inverseIndex].name) points at \(inverse.targetType), not \(model.name)")
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
        of index: Int, in model: EntityModel, declaration: any RelationshipDeclaration, target: EntityModel, place: String
    ) throws -> Int {
        if let inverseKeyPath = declaration.inverseKeyPath {
            guard let inverseIndex = target.propertyIndex(forKeyPath: inverseKeyPath), target.properties[inverseIndex].isRelationship else {
                throw StrataError.invalidSchema("\(place): its inverse must be a @Relationship property of \(target.name)")
            }
            if case .relationship(let inverse) = target.properties[inverseIndex].kind, let back = inverse.inverseKeyPath,
                model.propertyIndex(forKeyPath: back) != index
            {
                throw StrataError.invalidSchema("\(place) and \(target.name).\(target.properties[inverseIndex].name) name different inverses")
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
            throw StrataError.invalidSchema("\(place) has no inverse: name it on one side, e.g. @Relationship(inverse: \\\(target.name).property)")
        }
        return naming[0]
    }
}

public import Foundation
public import StrataStorage
import Synchronization

extension ObjectContext {
    /// Inserts a new object; it is written at the next ``save()``.
    ///
    /// The object gets a temporary ``StrataStorage/ObjectID`` until saved, then ``ManagedObject/awakeFromInsert()``
    /// runs. Call inside `perform`.
    ///
    /// ```swift
    /// let account = context.insert(Account())
    /// ```
    ///
    /// An object whose class is not in the container's schema is not inserted (it stays a plain,
    /// unsaved value) and the refusal is recorded: the next ``save()`` throws `.misuse` naming
    /// the class and the schema's entities, and writes nothing, until ``rollback()`` or
    /// ``reset()`` clears the refusal.
    @discardableResult
    public func insert<Object: ManagedObject>(_ object: Object) -> Object {
        requireInside("ObjectContext.insert(_:)")
        guard object.link == nil else {
            Misuse.fail(
                """
                ObjectContext.insert(_:) was given a \(Object.entityName) that already belongs to a context; an \
                object can be inserted once, into one context
                """
            )
        }
        if object.model == nil, let model = schemaModel(of: type(of: object)) {
            // The common case, `Entity(context:)`: no trip to the model registry's lock.
            object.model = model
            object.slots = link.claimSlots(model.defaults, count: model.columnCount)
        } else if object.model.flatMap({ schema.number(of: $0) }) == nil {
            // Not in the schema (or not an entity at all): refused, reported by the next save.
            refusedInserts.append(notInSchema(type(of: object).entityName, type: type(of: object)))
            return object
        }
        object.link = link
        object.temporarySerial = TemporaryIDs.next()
        object.state.insert(.inserted)
        inserted.append(object)
        temporaries[object.temporarySerial] = object
        object.awakeFromInsert()
        return object
    }

    /// Marks an object for deletion at the next ``save()``, where delete rules apply.
    /// Deleting an unsaved object simply discards it. Call inside `perform`.
    public func delete(_ object: ManagedObject) {
        requireInside("ObjectContext.delete(_:)")
        requireOwned(object, "ObjectContext.delete(_:)")
        guard !object.state.contains(.deleted) else { return }
        object.state.insert(.deleted)
        deleted.append(object)
    }

    /// Stops the program when `object` belongs to another context (or none).
    func requireOwned(_ object: ManagedObject, _ api: String) {
        guard object.link === link else {
            Misuse.fail(
                """
                \(api) was given \(object), which belongs to \
                \(object.link == nil ? "no context (insert it first)" : "another context"). Objects cannot move \
                between contexts: look the object up by its objectID in this context instead.
                """
            )
        }
    }

    // MARK: Lookup
    //
    // Two ways in, named as in Core Data: `existingObject(with:)` (and its typed form) from an
    // ID, and `managedObjectID(forURIRepresentation:)` from a URI. `ObjectID` values cross
    // `perform` as they are (and are `Codable`, encoded as their URI).

    /// The object with this ID, loading it from the store if this context has not seen it.
    ///
    /// Returns the context's own instance when it already has one (including unsaved changes).
    /// Call inside `perform`.
    ///
    /// ```swift
    /// let object = try context.existingObject(with: id)
    /// ```
    /// An ID made before its entity was renamed (``ManagedObject/originalEntityName``) finds the
    /// object under the new name.
    /// - Throws: ``StrataStorage/StrataError/invalidURI(_:reason:)`` for an ID of another store
    ///   (`.otherStore`) or of an entity not in the schema (`.unknownEntity`),
    ///   ``StrataStorage/StrataError/objectNotFound(_:)`` when no such row exists, `.misuse` outside `perform`,
    ///   and engine errors.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        try checkInside("ObjectContext.existingObject(with:)")
        return try registeredOrLoaded(id, model: model(of: id))
    }

    /// The object with this ID, as the class you expect.
    ///
    /// ```swift
    /// let account = try context.existingObject(with: accountID, as: Account.self)
    /// ```
    /// - Throws: the errors of ``existingObject(with:)``, and
    ///   ``StrataStorage/StrataError/wrongEntity(_:expected:)`` when the ID names an object of another entity
    ///   (checked before anything is loaded).
    public func existingObject<Object: ManagedObject>(with id: ObjectID, as type: Object.Type) throws -> Object {
        try checkInside("ObjectContext.existingObject(with:as:)")
        let model = try model(of: id)
        guard model.type is Object.Type, let object = try registeredOrLoaded(id, model: model) as? Object else {
            throw StrataError.wrongEntity(id, expected: Object.entityName)
        }
        return object
    }

    /// The entity of an ID of this store.
    /// - Throws: `.invalidURI` with `.otherStore` or `.unknownEntity`.
    private func model(of id: ObjectID) throws -> EntityModel {
        guard id.storeIdentifier == link.storeIdentifier else {
            throw StrataError.invalidURI(id.uriString, reason: .otherStore)
        }
        // An ID made before its entity was renamed (`originalEntityName`): the rename kept the key.
        guard let model = schema.model(named: id.entityName) ?? schema.model(renamedFrom: id.entityName) else {
            throw StrataError.invalidURI(id.uriString, reason: .unknownEntity)
        }
        return model
    }

    /// The object of an ID whose entity is `model`: registered in this context, or loaded.
    /// - Throws: `.objectNotFound`, and the store's errors.
    private func registeredOrLoaded(_ id: ObjectID, model: EntityModel) throws -> ManagedObject {
        switch id.kind {
        case .temporary(let serial):
            guard let object = temporaries[serial], object.model === model, !object.state.contains(.gone) else {
                throw StrataError.objectNotFound(id)
            }
            return object
        case .permanent(let key):
            guard let object = try object(model: model, key: key), !object.state.contains(.gone) else {
                throw StrataError.objectNotFound(id)
            }
            return object
        }
    }

    /// The ID a URI names (the form ``StrataStorage/ObjectID/uriRepresentation`` gives), checked against this
    /// context's store and schema; look the object up with ``existingObject(with:as:)``.
    ///
    /// ```swift
    /// let id = try context.managedObjectID(forURIRepresentation: url)
    /// let account = try context.existingObject(with: id, as: Account.self)
    /// ```
    /// Unlike Core Data's method of the same name it throws rather than returning nil, so that
    /// the caller learns why. It reads no row, so the object may still be missing. A URI made
    /// before its entity was renamed (``ManagedObject/originalEntityName``) gives the ID under the
    /// new name.
    /// - Throws: ``StrataStorage/StrataError/invalidURI(_:reason:)`` with `.malformed` (not a Strata object
    ///   URI), `.otherStore` or `.unknownEntity`.
    public func managedObjectID(forURIRepresentation url: URL) throws -> ObjectID {
        try managedObjectID(forURIText: url.absoluteString)
    }

    /// ``managedObjectID(forURIRepresentation:)`` of the URI's text, for this package's services,
    /// which take IDs from clients as strings: no `URL` made (`URL(string:)` and its
    /// `absoluteString` cost more than the parse itself), and an error names the text as given.
    /// - Throws: as ``managedObjectID(forURIRepresentation:)``.
    package func managedObjectID(forURIText uri: String) throws -> ObjectID {
        let id = try ObjectID(parsing: uri)
        guard id.storeIdentifier == link.storeIdentifier else { throw StrataError.invalidURI(uri, reason: .otherStore) }
        if schema.model(named: id.entityName) != nil { return id }
        // A URI made before the entity was renamed (`originalEntityName`): the rename kept the key.
        guard let renamed = schema.model(renamedFrom: id.entityName) else {
            throw StrataError.invalidURI(uri, reason: .unknownEntity)
        }
        return ObjectID(storeIdentifier: id.storeIdentifier, entityName: renamed.name, kind: id.kind)
    }

    /// Gives unsaved objects their permanent IDs now, before saving.
    /// - Throws: engine errors from key allocation.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        try checkInside("ObjectContext.obtainPermanentIDs(for:)")
        for object in objects { requireOwned(object, "ObjectContext.obtainPermanentIDs(for:)") }
        try assignPermanentKeys(objects.filter { $0.key == 0 })
    }

    /// Allocates keys for objects without one and registers them under those keys.
    func assignPermanentKeys(_ objects: [ManagedObject]) throws {
        var byEntity: [Int: [ManagedObject]] = [:]
        for object in objects where object.key == 0 {
            byEntity[try entityNumber(object.model!), default: []].append(object)
        }
        for (number, group) in byEntity.sorted(by: { $0.key < $1.key }) {
            let keys = try allocateKeys(entity: number, count: group.count)
            try Self.checkAllocated(keys, count: group.count, entity: schema.entityNames[number])
            registry[number].reserveCapacity(registry[number].count + group.count)
            for (object, key) in zip(group, keys) {
                object.key = key
                registry[number][key] = object
            }
        }
    }

    /// The registered object for a key, or the row loaded from the snapshot; nil when absent.
    func object(model: EntityModel, key: Int64) throws -> ManagedObject? {
        let number = try entityNumber(model)
        let link = self.link
        return try registry[number].object(forKey: key) {
            guard let row = try snapshot().row(entity: number, key: key) else { return nil }
            try Self.checkShape(row, of: model)
            return Self.makeObject(for: row, model: model, link: link)
        }
    }

    /// The context's object for a row: the registered instance if any, else a new one.
    /// - Throws: `.storeCorrupt` when the row does not have the entity's shape.
    @inline(__always)
    func materialize(_ row: StoredRow, model: EntityModel, number: Int) throws(StrataError) -> ManagedObject {
        try Self.checkShape(row, of: model)
        let link = self.link
        return registry[number].object(forKey: row.key) { Self.makeObject(for: row, model: model, link: link) }
    }

    /// A new object for a stored row (of the entity's shape: see ``checkShape(_:of:)``), not yet
    /// registered.
    @inline(__always)
    static func makeObject(for row: StoredRow, model: EntityModel, link: ContextLink) -> ManagedObject {
        let object = model.type.init()
        object.model = model
        object.link = link
        object.key = row.key
        object.version = row.version
        object.slots = link.claimSlots(row.values, count: model.columnCount)
        return object
    }

    /// Throws `.storeCorrupt` unless `row` has one value per column of `model`. An engine that
    /// returns another shape breaks its contract; its row must not become an object. Throws
    /// `.undecodableValue` when a raw-value or Codable column holds a value its type cannot decode.
    @inline(__always)
    static func checkShape(_ row: StoredRow, of model: EntityModel) throws(StrataError) {
        if row.values.count != model.columnCount { throw shapeError(row, model) }
        if !model.checkedColumns.isEmpty { try model.checkDecodable(row) }
    }

    @inline(never)
    private static func shapeError(_ row: StoredRow, _ model: EntityModel) -> StrataError {
        .storeCorrupt(
            """
            the engine returned row \(row.key) of \(model.name) with \(row.values.count) values; the entity has \
            \(model.columnCount) columns
            """
        )
    }

    /// Records that a saved object changed (called by the object on its first change).
    func registerUpdate(_ object: ManagedObject) {
        updated.append(object)
    }

    /// Records that a saved object's to-many relationship `property` changed: its version is bumped
    /// at save (and, with history on, the history names the relationship).
    func registerTouch(_ object: ManagedObject, property: Int) {
        if changeHub != nil && (!object.state.contains(.touched) || Self.hasSeveralToMany(object)) {
            // Once touched, an object with one to-many relationship has it noted already.
            noteToManyChange(object, property: property)
        }
        guard !object.state.contains(.touched), !object.state.contains(.inserted) else { return }
        object.state.insert(.touched)
        touched.append(object)
    }

    /// Whether the object's entity has more than one to-many relationship (those own no column).
    private static func hasSeveralToMany(_ object: ManagedObject) -> Bool {
        guard let model = object.modelReference?.model else { return true }
        return model.properties.count - model.columnCount > 1
    }

    /// Records that an object's to-one relationship changed in memory.
    func registerRelationChange(_ object: ManagedObject) {
        guard !object.state.contains(.relationDirty) else { return }
        object.state.insert(.relationDirty)
        relationDirty.append(object)
    }
}

/// Process-wide serial numbers for temporary object IDs.
enum TemporaryIDs {
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

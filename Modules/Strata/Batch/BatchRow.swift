import Foundation
import StrataStorage

/// The values of one row of a batch insert, set by key path: the row a
/// ``ObjectContext/batchInsert(_:from:onConflict:_:)`` closure fills.
///
/// A row starts with every attribute's declared default and no relationship targets. Set an
/// attribute with its key path, a to-one relationship with the target's ``StrataStorage/ObjectID``:
///
/// ```swift
/// try context.batchInsert(Account.self, from: names) { name, row in
///     row[\.name] = name
///     row[\.balance] = 100
/// }
/// ```
///
/// Lifetime: a row is valid only inside the closure it is passed to.
public struct BatchRow<Model: ManagedObject> {
    let model: EntityModel
    var values: ContiguousArray<StoredValue>
    var columns: BatchColumnCache

    init(model: EntityModel, columns: BatchColumnCache) {
        self.model = model
        self.values = model.defaults
        self.columns = columns
    }

    /// The value of an attribute in this row (its default until set).
    ///
    /// A key path that is not a stored attribute of `Model` is a programming error: the setter
    /// records it and the batch call throws `.misuse` after the closure returns.
    public subscript<Value: AttributeValue>(keyPath: KeyPath<Model, Value>) -> Value {
        get {
            guard let column = columns.column(keyPath, model: model, relationship: false),
                let value = Value(storedValue: values[column])
            else { return Self.fallback(keyPath, model: model) }
            return value
        }
        set {
            guard let column = columns.column(keyPath, model: model, relationship: false) else { return }
            values[column] = newValue.storedValue
        }
    }

    /// The target of a to-one relationship in this row, by object ID (nil until set).
    ///
    /// The ID must name a saved object of the relationship's target entity in this store; the
    /// batch call throws `.misuse` otherwise.
    public subscript<Target: ManagedObject>(keyPath: KeyPath<Model, Target?>) -> ObjectID? {
        get {
            guard let column = columns.column(keyPath, model: model, relationship: true),
                case .integer(let key) = values[column],
                let relation = model.relations[model.columnProperties[column]]
            else { return nil }
            return ObjectID(storeIdentifier: columns.storeIdentifier, entityName: relation.target.name, primaryKey: key)
        }
        set {
            guard let column = columns.column(keyPath, model: model, relationship: true) else { return }
            guard let newValue else {
                values[column] = .null
                return
            }
            guard let relation = model.relations[model.columnProperties[column]],
                newValue.storeIdentifier == columns.storeIdentifier, newValue.entityName == relation.target.name,
                case .permanent(let key) = newValue.kind
            else {
                columns.recordBadTarget(newValue, keyPath: keyPath, model: model)
                return
            }
            values[column] = .integer(key)
        }
    }

    private static func fallback<Value: AttributeValue>(_ keyPath: KeyPath<Model, Value>, model: EntityModel) -> Value {
        if let property = model.propertyIndex(forKeyPath: keyPath),
            let value = model.typedDefault(ofProperty: property) as? Value
        {
            return value
        }
        return model.prototype[keyPath: keyPath as AnyKeyPath] as! Value
    }
}

/// Key path → column lookups of one batch, remembered by key path, and the first misuse seen.
final class BatchColumnCache {
    let storeIdentifier: UUID
    private var known: [(keyPath: AnyKeyPath, column: Int)] = []
    /// Where the next lookup starts: a batch's closure sets the same key paths in the same order
    /// for every row, so the entry after the last hit is usually the next one wanted.
    private var next = 0
    private(set) var misuse: StrataError?

    init(storeIdentifier: UUID) {
        self.storeIdentifier = storeIdentifier
    }

    func column(_ keyPath: AnyKeyPath, model: EntityModel, relationship: Bool) -> Int? {
        let entries = known
        let start = next < entries.count ? next : 0
        for offset in entries.indices {
            var index = start + offset
            if index >= entries.count { index -= entries.count }
            if entries[index].keyPath === keyPath {
                next = index + 1
                return entries[index].column
            }
        }
        guard let property = model.propertyIndex(forKeyPath: keyPath), let column = model.properties[property].column,
            model.properties[property].isRelationship == relationship
        else {
            if misuse == nil {
                misuse = .misuse(
                    """
                    a batch row of \(model.name) was given \(keyPath), which is not a stored \
                    \(relationship ? "to-one relationship" : "attribute") of \(model.name); nothing was written. \
                    Use the key path of an @\(relationship ? "Relationship" : "Attribute") property
                    """)
            }
            return nil
        }
        known.append((keyPath, column))
        next = known.count
        return column
    }

    func recordBadTarget(_ id: ObjectID, keyPath: AnyKeyPath, model: EntityModel) {
        guard misuse == nil else { return }
        misuse = .misuse(
            """
            a batch row of \(model.name) links \(keyPath) to \(id.uriString), which is not a saved object of the \
            relationship's target entity in this store; nothing was written. Save the target first and pass its \
            permanent object ID
            """)
    }
}

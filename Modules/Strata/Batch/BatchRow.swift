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
/// Lifetime: a row is valid only inside the closure it is passed to. Set its values; a closure that
/// replaces it with a row kept from another batch makes the batch call throw `.misuse`.
public struct BatchRow<Model: ManagedObject> {
    /// The batch being staged, positioned at this row: the row's values live there, so the
    /// staging code that is not specialized for `Model` reaches them without type metadata.
    @usableFromInline var staging: BatchInsertStaging

    @usableFromInline
    init(_ staging: BatchInsertStaging) {
        self.staging = staging
    }

    /// The value of an attribute in this row (its default until set).
    ///
    /// A key path that is not a stored attribute of `Model` is a programming error: the setter
    /// records it and the batch call throws `.misuse` after the closure returns.
    @inlinable
    public subscript<Value: AttributeValue>(keyPath: KeyPath<Model, Value>) -> Value {
        get {
            guard let column = staging.attributeColumn(keyPath),
                let value = Value(storedValue: staging.values[column])
            else { return defaultValue(keyPath) }
            return value
        }
        set {
            // Inlined into the caller's closure, so the conversion to a stored value is
            // specialized for `Value`; only the key path → column look-up is a call.
            guard let column = staging.learnAttributeColumn(keyPath) else { return }
            staging.values[column] = newValue.storedValue
        }
    }

    /// The target of a to-one relationship in this row, by object ID (nil until set).
    ///
    /// The ID must name a saved object of the relationship's target entity in this store; the
    /// batch call throws `.misuse` otherwise.
    public subscript<Target: ManagedObject>(keyPath: KeyPath<Model, Target?>) -> ObjectID? {
        get { staging.target(keyPath) }
        set { staging.setTarget(keyPath, newValue) }
    }

    /// The declared default of an attribute, for a read of a column that was never set.
    @usableFromInline
    func defaultValue<Value: AttributeValue>(_ keyPath: KeyPath<Model, Value>) -> Value {
        let model = staging.model
        if let property = model.propertyIndex(forKeyPath: keyPath),
            let value = model.typedDefault(ofProperty: property) as? Value
        {
            return value
        }
        return model.prototype[keyPath: keyPath as AnyKeyPath] as! Value
    }
}

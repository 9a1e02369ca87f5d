import StrataStorage

/// What a batch insert does with a row whose unique value is already taken (an upsert's
/// conflict target): fail, skip the row, or update the existing row.
///
/// The key paths given to `matching:` must be exactly the attributes of one declared unique
/// constraint (`@Attribute(.unique)` or `EntityIndex.unique(…)`); anything else is `.misuse`.
/// A later row of the same batch with the same unique value counts as a clash with the earlier
/// row.
///
/// ```swift
/// // Insert new accounts, update the balance of those whose name exists already.
/// try context.batchInsert(Account.self, from: rows, onConflict: .update(matching: [\.name], setting: [\.balance])) {
///     row, values in
///     values[\.name] = row.name
///     values[\.balance] = row.balance
/// }
/// ```
public struct UpsertPolicy<Model: ManagedObject>: Sendable {
    enum Action: Sendable {
        case fail
        case ignore
        case update(setting: [any PartialKeyPath<Model> & Sendable])
    }

    let action: Action
    let matching: [any PartialKeyPath<Model> & Sendable]

    /// A clash fails the whole save with `.constraintViolation` naming the row; nothing is written.
    public static var fail: Self { Self(action: .fail, matching: []) }

    /// A row whose unique value exists is skipped; the existing row is left as it is.
    public static func ignore(matching uniqueKeyPaths: [any PartialKeyPath<Model> & Sendable]) -> Self {
        Self(action: .ignore, matching: uniqueKeyPaths)
    }

    /// A row whose unique value exists updates the existing row's listed attributes (and
    /// to-one relationships) to the row's values; the others keep theirs. The existing row's
    /// version goes up, as with any update.
    public static func update(
        matching uniqueKeyPaths: [any PartialKeyPath<Model> & Sendable],
        setting keyPaths: [any PartialKeyPath<Model> & Sendable]
    ) -> Self {
        Self(action: .update(setting: keyPaths), matching: uniqueKeyPaths)
    }
}

/// One change a batch update makes to every row it selects: a constant, or arithmetic on the
/// row's own value.
///
/// ```swift
/// try context.batchUpdate(
///     Account.self, where: #Predicate { $0.balance < 0 }, set: [.add(\.balance, 100), .value(\.currency, "EUR")])
/// ```
public struct BatchAssignment<Model: ManagedObject>: Sendable {
    enum Operation: Sendable {
        case value(StoredValue)
        case add(StoredValue)
        case multiply(StoredValue)
    }

    let keyPath: any PartialKeyPath<Model> & Sendable
    let operation: Operation

    /// Sets the attribute to `value` in every selected row.
    public static func value<Value: AttributeValue>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, _ value: Value
    ) -> Self {
        Self(keyPath: keyPath, operation: .value(value.storedValue))
    }

    /// Adds `amount` to the attribute's own value in every selected row (`balance + amount`); a
    /// null stays null. An integer result past the attribute's range fails the save with
    /// `.validation`, naming the row.
    public static func add<Value: AttributeValue & Numeric>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, _ amount: Value
    ) -> Self {
        Self(keyPath: keyPath, operation: .add(amount.storedValue))
    }

    /// Multiplies the attribute's own value by `factor` in every selected row; a null stays null.
    public static func multiply<Value: AttributeValue & Numeric>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, by factor: Value
    ) -> Self {
        Self(keyPath: keyPath, operation: .multiply(factor.storedValue))
    }
}

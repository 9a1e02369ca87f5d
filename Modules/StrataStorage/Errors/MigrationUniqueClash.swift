/// The cause an engine gives when a migration adds a unique constraint that rows already in the
/// store break: the `.constraintViolation`'s native error names the first clashing rows and
/// their values, so that the user knows which rows to change with the previous model, and
/// ``StrataError``'s description words the refusal as a migration's, not a save's.
///
/// For engine authors: an engine refusing such a migration throws `.constraintViolation` with
/// ``cause(engine:code:sqlState:entity:attributes:keys:values:)`` as its native error.
///
/// ```swift
/// throw StrataError.constraintViolation(
///     entity: "Note", attributes: ["title"],
///     native: MigrationUniqueClash.cause(
///         engine: "sqlite", code: 2067, entity: "Note", attributes: ["title"], keys: [1, 4], values: ["'Dune'"]))
/// // Uniqueness constraint on Note(title) cannot be added: … (Cause: sqlite code 2067 "rows 1 and 4
/// // of Note hold the same title ('Dune')" during adding a unique constraint in a migration.)
/// ```
public enum MigrationUniqueClash {
    /// The native error's operation, which ``StrataError``'s description recognizes.
    public static let operation = "adding a unique constraint in a migration"

    /// The native error for rows `keys` of `entity`, which hold the same `values` (one display
    /// string per attribute, as the engine shows it) in `attributes`; `code` (and `sqlState`) are
    /// what the engine reports for a unique clash.
    public static func cause(
        engine: String, code: Int, sqlState: String? = nil, entity: String, attributes: [String], keys: [Int64],
        values: [String]
    ) -> NativeError {
        NativeError(
            engine: engine, code: code,
            message: message(entity: entity, attributes: attributes, keys: keys, values: values),
            operation: operation, sqlState: sqlState)
    }

    /// How many keys a message names; the rest are counted.
    public static let namedKeys = 5

    /// "rows 1 and 4 of Note hold the same title ('Dune')", or with several attributes "… the same
    /// name and city ('Ada', 'London')"; past ``namedKeys`` keys, "rows 1, 2, 3, 4, 5 and 7 more".
    public static func message(entity: String, attributes: [String], keys: [Int64], values: [String]) -> String {
        var sorted = keys.sorted().prefix(namedKeys).map(String.init)
        if keys.count > namedKeys { sorted.append("\(keys.count - namedKeys) more") }
        let rows =
            sorted.count <= 1
            ? "row \(sorted.first ?? "?")"
            : "rows \(sorted.dropLast().joined(separator: ", ")) and \(sorted[sorted.count - 1])"
        let names =
            attributes.count <= 1
            ? attributes.first ?? ""
            : "\(attributes.dropLast().joined(separator: ", ")) and \(attributes[attributes.count - 1])"
        let verb = keys.count == 1 ? "holds" : "hold"
        return "\(rows) of \(entity) \(verb) the same \(names) (\(values.joined(separator: ", ")))"
    }

    /// Whether `error` is a migration's refusal of a unique constraint over clashing rows.
    public static func isClash(_ native: NativeError?) -> Bool {
        native?.operation == operation
    }
}

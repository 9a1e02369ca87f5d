import StrataStorage

// Raw-value and Codable attributes: how predicates may use their columns, and the checks of
// their stored values as rows load and as objects are saved.
extension EntityModel {
    /// How the core treats the values of a column (`.scalar` for relationships' keys too).
    func valueKind(ofColumn column: Int) -> AttributeValueKind {
        for checked in checkedColumns where checked.column == column { return checked.kind }
        return .scalar
    }

    /// Refuses declarations a checked attribute cannot honour.
    /// - Throws: `.invalidSchema` for a unique Codable attribute (equal values need not store
    ///   equal bytes) and for a default that does not encode into a value that decodes.
    static func checkDeclaration(
        _ options: AttributeOptions, _ defaultValue: StoredValue, of checked: CheckedColumn, _ name: String
    ) throws(StrataError) {
        if case .codable = checked.kind, options.contains(.unique) {
            throw .invalidSchema(
                "\(name) is a Codable attribute and cannot be unique: equal values need not encode to equal bytes")
        }
        if let failure = checked.decodingFailure(defaultValue) {
            throw .invalidSchema("\(name) has a default that cannot be stored: \(failure)")
        }
    }

    /// Throws unless every checked column of a loaded row decodes into its attribute's type.
    /// - Throws: ``StrataStorage/StrataError/undecodableValue(entity:attribute:key:reason:)``.
    func checkDecodable(_ row: StoredRow) throws(StrataError) {
        for checked in checkedColumns {
            if let failure = checked.decodingFailure(row.values[checked.column]) {
                let property = properties[columnProperties[checked.column]]
                throw .undecodableValue(entity: name, attribute: property.name, key: row.key, reason: failure)
            }
        }
    }

    /// The checked values of an object about to be saved that would not load again (a Codable
    /// value that could not be encoded, such as one holding a NaN or infinite `Double`).
    func undecodableIssues(_ value: (Int) -> StoredValue) -> [ValidationIssue] {
        checkedColumns.compactMap { checked in
            guard let failure = checked.decodingFailure(value(checked.column)) else { return nil }
            let property = properties[columnProperties[checked.column]]
            let message =
                """
                the value does not encode into a value that reads back (a Double field holding NaN or infinity \
                cannot be JSON): \(failure)
                """
            return ValidationIssue(entity: name, property: property.name, message: message)
        }
    }
}

import StrataStorage

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

import StrataStorage

extension EntityModel {
    /// An entity's per-property and per-column tables, laid out from its declarations in
    /// declaration order: attributes and to-one relationships get the next column, to-many
    /// relationships none. Each attribute's declaration is checked as it is read.
    struct PropertyTables {
        private(set) var properties: [PropertyModel] = []
        /// Column number → property index.
        private(set) var columnProperties: [Int] = []
        /// Column defaults for new objects.
        private(set) var defaults = ContiguousArray<StoredValue>()
        /// Per property: an attribute's declared default as its Swift type (nil for relationships).
        private(set) var typedDefaults: [(any Sendable)?] = []
        /// Per property: its declaration site.
        private(set) var sites: [UInt32] = []
        /// The raw-value and Codable columns.
        private(set) var checkedColumns: [CheckedColumn] = []
        /// Attribute name → the name older stores have for it.
        private(set) var originalNames: [String: String] = [:]

        /// Lays out the properties of entity `entity` from what its class declares.
        /// - Throws: `.invalidSchema` for a declaration that could not be read, a default that
        ///   changes per instance, is NaN or cannot be stored, and a unique Codable attribute.
        init(entity: String, declarations: Declarations) throws(StrataError) {
            for (index, (label, value)) in declarations.wrappers.enumerated() {
                let propertyName = label.hasPrefix("_") ? String(label.dropFirst()) : label
                if let attribute = value as? any AttributeWrapper {
                    try addAttribute(
                        attribute, named: propertyName, at: index, place: "\(entity).\(propertyName)",
                        declarations: declarations)
                } else if let wrapper = value as? any RelationshipWrapper {
                    try addRelationship(
                        wrapper, named: propertyName, at: index, place: "\(entity).\(propertyName)",
                        declarations: declarations)
                }
            }
        }

        /// Property index → its column, or -1 (to-many relationships).
        var columnTable: ContiguousArray<Int> { ContiguousArray(properties.map { $0.column ?? -1 }) }

        /// The columns of attributes marked ``AttributeOptions/preserveAfterDeletion``.
        var preservedColumns: [Int] {
            properties.compactMap { property in
                guard case .attribute(_, _, let options) = property.kind else { return nil }
                return options.contains(.preserveAfterDeletion) ? property.column : nil
            }
        }

        /// Adds the attribute at wrapper `index`, with the next column.
        private mutating func addAttribute(
            _ attribute: any AttributeWrapper, named propertyName: String, at index: Int, place: String,
            declarations: Declarations
        ) throws(StrataError) {
            guard
                case .attribute(let defaultValue, let typedDefault, let options, let originalName)? =
                    declarations.captured[attribute.site]
            else {
                throw .invalidSchema("\(place): its @Attribute declaration could not be read")
            }
            try EntityModel.checkConstantDefault(defaultValue, twinDefault: declarations.twinDefault(at: index), place)
            try EntityModel.checkStorableDefault(defaultValue, place)
            if let checked = (attribute as? any CheckedAttributeWrapper)?.checkedColumn(columnProperties.count) {
                try EntityModel.checkDeclaration(options, defaultValue, of: checked, place)
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
        }

        /// Adds the relationship at wrapper `index`; a to-one gets the next column (its target's key).
        private mutating func addRelationship(
            _ wrapper: any RelationshipWrapper, named propertyName: String, at index: Int, place: String,
            declarations: Declarations
        ) throws(StrataError) {
            guard case .relationship(let inverse, let deleteRule)? = declarations.captured[wrapper.site] else {
                throw .invalidSchema("\(place): its @Relationship declaration could not be read")
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
}

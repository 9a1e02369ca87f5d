import StrataStorage

// Resolving a model's relationships as the registry builds it: each one's target model, its
// inverse, and a many-to-many's join.
extension ModelRegistry {
    /// Fills `model.relations`, building the target models it reaches into `pending`. Under the
    /// registry's lock, before the model is published.
    /// - Throws: `.invalidSchema` for an inverse that is missing, not a relationship, points at
    ///   another class, or names another inverse than its own side does.
    static func resolveRelations(of model: EntityModel, pending: inout [EntityModel]) throws {
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

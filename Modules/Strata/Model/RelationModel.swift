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

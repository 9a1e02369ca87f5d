/// One engine-neutral step of an inferred migration, in model terms.
///
/// ``SchemaMigrationPlan/infer(from:to:renames:)`` lists them in the order an engine applies
/// them; an engine applies every step of a plan in the one transaction that also records the new
/// schema (see ``SchemaMigrationApplier``). Names are the model's after every rename step that
/// comes before in the plan.
///
/// ```swift
/// for step in plan.steps {
///     if case .addAttribute(let entity, let attribute, let fill) = step { /* ALTER TABLE … ADD COLUMN */ }
/// }
/// ```
public enum SchemaMigrationStep: Sendable, Hashable {
    /// Create an entity's table or database (empty).
    case addEntity(RecordedEntity)
    /// Drop an entity and all its rows.
    case dropEntity(String)
    /// Rename an entity, keeping its rows (the model declares `originalName` = `from`).
    case renameEntity(from: String, to: String)
    /// Add a column; every existing row gets `fill` (the attribute's default, or null when it is
    /// optional without one).
    case addAttribute(entity: String, RecordedAttribute, fill: StoredValue)
    /// Remove a column and its values.
    case dropAttribute(entity: String, attribute: String)
    /// Rename a column, keeping its values (the model declares `originalName` = `from`).
    case renameAttribute(entity: String, from: String, to: String)
    /// A required attribute becomes optional; values are kept.
    case makeOptional(entity: String, attribute: String)
    /// An optional attribute becomes required; rows holding null get `fill` (the new default).
    case makeRequired(entity: String, attribute: String, fill: StoredValue)
    /// The default new objects get changes; stored values are kept (an engine that stores
    /// defaults in its table definition updates it).
    case changeDefault(entity: String, attribute: String, to: RecordedValue?)
    /// Add a relationship: a to-one adds its key column, null in every existing row; a to-many or
    /// many-to-many stores nothing of its own (its inverse's column or its join does).
    case addRelationship(entity: String, RecordedRelationship)
    /// Remove a relationship: a to-one drops its key column and the engine's index of it.
    case dropRelationship(entity: String, RecordedRelationship)
    /// A relationship's delete rule changes; nothing stored changes.
    case changeDeleteRule(entity: String, relationship: String, to: String)
    /// The stored columns of an entity are laid out in this new order (every row is rewritten).
    case reorderColumns(entity: String, columns: [String])
    /// Create an index over existing rows.
    case addIndex(entity: String, RecordedIndex)
    /// Drop an index.
    case dropIndex(entity: String, name: String)
    /// Add a unique constraint. The engine first checks the existing rows: any two rows with the
    /// same values throw ``StrataError/constraintViolation(entity:attributes:native:)`` and the
    /// transaction is rolled back.
    case addUniqueConstraint(entity: String, RecordedIndex)
    /// Drop a unique constraint.
    case dropUniqueConstraint(entity: String, name: String)
    /// Create an empty many-to-many join.
    case addJoin(RecordedJoin)
    /// Drop a many-to-many join and its links.
    case dropJoin(String)
    /// Rename a join table (its entities were renamed); its links are kept.
    case renameJoin(from: String, to: String)
    /// Swap a join's sides, keeping its links: every (left, right) pair becomes (right, left).
    /// It follows a ``renameJoin(from:to:)`` whose entity renames changed which entity's name
    /// sorts first (join names put their sides in name order).
    case swapJoinSides(String)

    /// The order class of the step: a plan applies drops before renames, renames before column
    /// changes, and index and constraint creation last, so that they see the final rows.
    var phase: Int {
        switch self {
        case .dropIndex, .dropUniqueConstraint, .dropJoin: 0
        case .renameEntity, .renameJoin, .swapJoinSides: 1
        case .dropEntity: 2
        case .renameAttribute: 3
        case .dropAttribute, .dropRelationship: 4
        case .addEntity: 5
        case .addAttribute, .addRelationship, .makeOptional, .makeRequired, .changeDefault, .changeDeleteRule: 6
        case .reorderColumns: 7
        case .addJoin: 8
        case .addIndex: 9
        case .addUniqueConstraint: 10
        }
    }
}

/// Renames the model declares through `originalName`, which the planner pairs with the store's names.
///
/// Until `originalName:` is part of the model API the core fills this by hand (tests do).
///
/// ```swift
/// var renames = SchemaRenames()
/// renames.entities["Author"] = "Writer"                 // Author was called Writer
/// renames.attributes["Book", default: [:]]["title"] = "name"   // Book.title was Book.name
/// ```
public struct SchemaRenames: Sendable, Hashable {
    /// New entity name → the name the store knows.
    public var entities: [String: String]
    /// New entity name → (new attribute name → the name the store knows).
    public var attributes: [String: [String: String]]

    /// Renames; none by default.
    public init(entities: [String: String] = [:], attributes: [String: [String: String]] = [:]) {
        self.entities = entities
        self.attributes = attributes
    }
}

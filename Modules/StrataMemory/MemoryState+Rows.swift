import Foundation
import StrataStorage

/// The row writes of a commit (``StrataStorage/ChangeSet``), applied to a working copy of the state
/// in the contract's order, collecting version conflicts and the first unique clash.
struct MemoryRowWriter {
    /// The working copy; the store keeps it only when the whole commit passed.
    var state: MemoryState
    /// Every version mismatch found.
    var conflicts: [VersionConflict] = []
    /// The first unique clash, reported when there are no conflicts.
    var violation: StrataError?

    /// Applies verifies, deletes, unlinks, updates, touches, inserts and links, in that order.
    /// - Throws: `.misuse` for a write that does not fit the schema; `.validation` for NaN;
    ///   `.storeFull` for an update past the highest version.
    mutating func apply(_ changes: ChangeSet) throws(StrataError) {
        for check in changes.verifies {
            let stored = try storedVersion(check.entity, check.key)
            if stored != check.expectedVersion { try conflict(check.entity, check.key, check.expectedVersion) }
        }
        for delete in changes.deletes { try self.delete(delete) }
        for link in changes.unlinks {
            try state.checkJoin(link.join)
            state.joins[link.join].unlink(left: link.leftKey, right: link.rightKey)
        }
        for update in changes.updates { try write(update, isInsert: false) }
        for touch in changes.touches {
            guard let row = state.tables[try index(touch.entity)].rows[touch.key],
                row.version == touch.expectedVersion, row.version < .max
            else {
                try conflict(touch.entity, touch.key, touch.expectedVersion)
                continue
            }
            state.tables[touch.entity].rows[touch.key]?.version = row.version + 1
        }
        for insert in changes.inserts { try write(insert, isInsert: true) }
        for link in changes.links {
            try state.checkJoin(link.join)
            state.joins[link.join].link(left: link.leftKey, right: link.rightKey)
        }
    }

    /// The entity number, checked.
    private func index(_ entity: Int) throws(StrataError) -> Int {
        _ = try state.entity(entity)
        return entity
    }

    private func storedVersion(_ entity: Int, _ key: Int64) throws(StrataError) -> Int64? {
        state.tables[try index(entity)].rows[key]?.version
    }

    private mutating func delete(_ delete: RowVersionCheck) throws(StrataError) {
        let number = try index(delete.entity)
        guard state.tables[number].rows[delete.key]?.version == delete.expectedVersion else {
            try conflict(number, delete.key, delete.expectedVersion)
            return
        }
        state.tables[number].remove(delete.key)
        state.removeLinks(ofEntity: number, key: delete.key)
    }

    private mutating func write(_ write: RowWrite, isInsert: Bool) throws(StrataError) {
        let entity = try state.entity(write.entity)
        let values = try MemoryValues.checked(write.values, of: entity, key: write.key)
        let stored = state.tables[write.entity].rows[write.key]
        let version: Int64
        if isInsert {
            guard stored == nil else { return try conflict(write.entity, write.key, write.expectedVersion) }
            version = 1
        } else {
            guard let stored, stored.version == write.expectedVersion else {
                return try conflict(write.entity, write.key, write.expectedVersion)
            }
            guard stored.version < .max else {
                throw .storeFull(
                    """
                    \(entity.name) row \(write.key) has reached the highest version, \(Int64.max), and cannot \
                    be updated; copy its values into a new row
                    """)
            }
            version = stored.version + 1
        }
        if let clash = state.tables[write.entity].clash(values, key: write.key) {
            if violation == nil { violation = MemoryValues.violation(entity, state.tables[write.entity], clash) }
            return
        }
        state.tables[write.entity].put(write.key, MemoryRow(version: version, values: values))
    }

    /// Records a version mismatch on row `key` of entity `number`.
    private mutating func conflict(_ number: Int, _ key: Int64, _ expected: Int64) throws(StrataError) {
        let entity = try state.entity(number)
        guard key > 0 else { throw .misuse("\(entity.name) primary keys must be positive, got \(key)") }
        let id = ObjectID(storeIdentifier: state.identifier, entityName: entity.name, primaryKey: key)
        conflicts.append(
            VersionConflict(
                objectID: id, expectedVersion: expected, storedVersion: state.tables[number].rows[key]?.version))
    }
}

extension MemoryState {
    /// Removes every link naming row `key` of entity `number`, in every join.
    mutating func removeLinks(ofEntity number: Int, key: Int64) {
        for (position, join) in schema.joins.enumerated() {
            if join.leftEntity == number { joins[position].removeLinks(of: key, on: .left) }
            if join.rightEntity == number { joins[position].removeLinks(of: key, on: .right) }
        }
    }
}

/// Checks of the values a commit stores.
enum MemoryValues {
    /// `values` as entity's row `key` stores them: one per column, each of its column's storage
    /// class (an integer given to a real column becomes a real), null only in an optional column,
    /// no NaN, and a positive key.
    /// - Throws: `.misuse` for a row that does not fit; `.validation` for NaN.
    static func checked(
        _ values: ContiguousArray<StoredValue>, of entity: EntitySchema, key: Int64
    ) throws(StrataError) -> ContiguousArray<StoredValue> {
        guard key > 0 else { throw .misuse("\(entity.name) primary keys must be positive, got \(key)") }
        guard values.count == entity.columns.count else {
            throw .misuse(
                "\(entity.name) row \(key) has \(values.count) values; the entity has \(entity.columns.count) columns")
        }
        var result = values
        for column in values.indices {
            let value = values[column]
            let storage = entity.columns[column].type.storageClass
            if case .null = value, !entity.columns[column].isOptional {
                throw .misuse("\(entity.name).\(entity.columns[column].name) is not optional, got null in row \(key)")
            }
            if case .real(let real) = value, real.isNaN {
                throw .validation([
                    ValidationIssue(
                        entity: entity.name, property: entity.columns[column].name, message: "NaN cannot be stored")
                ])
            }
            if storage.admits(value) { continue }
            if storage == .real, case .integer(let integer) = value {
                result[column] = .real(Double(integer))
                continue
            }
            throw .misuse(
                """
                \(entity.name).\(entity.columns[column].name) stores \(storage.rawValue) values, got \(value)
                """)
        }
        return result
    }

    /// The native code of a unique clash the engine found (the engine's only native failure).
    static let uniqueClashCode = 1

    /// The `.constraintViolation` for a clash on `table`'s unique index number `clash`, with the
    /// engine's own report as its cause.
    static func violation(_ entity: EntitySchema, _ table: MemoryTable, _ clash: Int) -> StrataError {
        let unique = table.uniques[clash]
        let attributes = unique.columns.map { entity.columns[$0].name }
        return .constraintViolation(
            entity: entity.name, attributes: attributes, native: clashCause(entity, unique.position))
    }

    /// The engine's report of a clash on index number `position` of `entity`.
    static func clashCause(_ entity: EntitySchema, _ position: Int) -> NativeError {
        NativeError(
            engine: MemoryEngine.name, code: uniqueClashCode,
            message: "unique index \(entity.indexes[position].name) already holds these values for another row",
            operation: "commit")
    }
}

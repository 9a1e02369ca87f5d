import Foundation
import StrataStorage

extension LMDBCommitter {
    /// An index as the insert loop reads it: plain values, copied without reference counting.
    struct IndexPlan {
        var dbi: LMDBDatabase
        var isUnique: Bool
        /// The index's position in `Entity.indexes`.
        var ordinal: Int
        /// Its columns are `columns[firstColumn ..< firstColumn + columnCount]` of the run's column list.
        var firstColumn: Int
        var columnCount: Int
    }

    /// Which of an entity's databases a run of inserts still reaches in key order. Each new entry
    /// is first tried as an append (``LMDBTransaction/putNew(_:primaryKey:buffer:append:)``):
    /// new rows come with keys from a counter, past every stored one, so their pages fill instead
    /// of splitting in half; a database where an append was refused once (a key below its last,
    /// as most index keys are) is put the ordinary way for the rest of the run.
    struct AppendHints {
        var rows = true
        /// One per ``IndexPlan``, in the same order.
        var indexes: [Bool]

        init(indexCount: Int) { indexes = Array(repeating: true, count: indexCount) }
    }

    /// Inserts rows, one run of same-entity rows at a time: the entity, its column classes and
    /// its indexes are looked up once per run, not once per row.
    mutating func insertAll(_ writes: [RowWrite]) throws {
        var start = writes.startIndex
        while start < writes.endIndex {
            let number = writes[start].entity
            var end = start + 1
            while end < writes.endIndex, writes[end].entity == number { end += 1 }
            let entity = try entity(number)
            let (plans, columns) = Self.indexPlans(entity)
            let classes = entity.layout.classes
            var hints = AppendHints(indexCount: plans.count)
            for position in start..<end {
                try insert(
                    writes[position], entity, classes: classes, indexes: plans, columns: columns, hints: &hints)
            }
            start = end
        }
    }

    /// The insert loop's view of an entity's indexes, and the column list their plans point into.
    static func indexPlans(_ entity: LMDBCatalog.Entity) -> (plans: [IndexPlan], columns: [Int]) {
        var plans: [IndexPlan] = []
        var columns: [Int] = []
        for (ordinal, index) in entity.indexes.enumerated() {
            plans.append(
                IndexPlan(
                    dbi: index.dbi, isUnique: index.isUnique, ordinal: ordinal, firstColumn: columns.count,
                    columnCount: index.columns.count))
            columns.append(contentsOf: index.columns)
        }
        return (plans, columns)
    }

    /// Writes a new row, refusing a key that is taken (a conflict: none of the row's index
    /// entries are written), then its index entries, each tried as an append while `hints` allow.
    mutating func insert(
        _ write: RowWrite, _ entity: LMDBCatalog.Entity,
        classes: ContiguousArray<StorageClass>, indexes: [IndexPlan], columns: [Int], hints: inout AppendHints
    ) throws {
        try checkKey(write.key)
        guard write.values.count == classes.count,
            entity.requiredColumns.allSatisfy({ !write.values[$0].isNull }),
            RowCodec.encode(version: 1, values: write.values, checking: classes, into: rowBytes)
        else {
            // A value its column does not admit: `validate` names it.
            try validate(write, entity)
            throw StrataError.validation([
                ValidationIssue(entity: entity.name, property: "*", message: "a value does not fit its column")
            ])
        }
        do {
            if try !txn.putNew(entity.dbi, primaryKey: write.key, buffer: rowBytes, append: hints.rows) {
                hints.rows = false
            }
        } catch .keyExists {
            conflicts.append(
                VersionConflict(
                    objectID: ObjectID(
                        storeIdentifier: storeIdentifier, entityName: entity.name, primaryKey: write.key),
                    expectedVersion: write.expectedVersion, storedVersion: nil))
            return
        }
        for (position, index) in indexes.enumerated() {
            // Encoded column values, then the primary key unless the index is unique and no
            // value is null (nulls never conflict).
            keyBytes.reset()
            var hasNull = false
            for position in index.firstColumn..<index.firstColumn + index.columnCount {
                let value = write.values[columns[position]]
                IndexKeyCodec.append(value, to: keyBytes)
                if value.isNull { hasNull = true }
            }
            if !index.isUnique || hasNull {
                keyBytes.reserve(8)
                keyBytes.appendBigEndian(UInt64(bitPattern: write.key))
            }
            guard keyBytes.count <= maxKeySize else {
                throw Self.keyTooLong(
                    entity.indexes[index.ordinal], entity, size: keyBytes.count, maxKeySize: maxKeySize)
            }
            try putIndex(
                index.dbi, index.isUnique, entity, keyBytes, write.key, append: &hints.indexes[position]
            ) { entity.indexes[index.ordinal] }
        }
    }
}

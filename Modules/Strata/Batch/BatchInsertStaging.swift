import Foundation
import StrataStorage

/// A batch insert being staged: the rows filled so far and the row being filled now, with the
/// key path look-ups learned on the way. Not generic, so the per-row work that is not inlined
/// into the caller (finishing a row, resolving a key path) needs no type metadata.
///
/// ``ObjectContext/batchInsert(_:from:onConflict:_:)`` makes one, lends it to the caller's
/// closure as a ``BatchRow`` once per row, and stages it as a ``StagedInsert`` at the end.
@usableFromInline
struct BatchInsertStaging {
    /// This batch's identity: a row copied out of one batch's closure and assigned in another's
    /// carries the other batch, which ``finishRow(of:)`` refuses.
    @usableFromInline let batch = BatchIdentity()
    let model: EntityModel
    let number: Int
    let clash: StagedInsert.Clash
    let uniqueColumns: [Int]
    /// The row being filled: the declared defaults until set.
    @usableFromInline var values: ContiguousArray<StoredValue>
    var columns: BatchColumnCache
    private(set) var rows: [ContiguousArray<StoredValue>] = []

    init(
        model: EntityModel, number: Int, clash: StagedInsert.Clash, uniqueColumns: [Int], storeIdentifier: UUID,
        expectedRows: Int
    ) {
        self.model = model
        self.number = number
        self.clash = clash
        self.uniqueColumns = uniqueColumns
        self.values = model.defaults
        self.columns = BatchColumnCache(storeIdentifier: storeIdentifier)
        // The sequence's own estimate, clamped: a wild one must not trap or exhaust memory.
        rows.reserveCapacity(min(max(expectedRows, 0), ObjectContext.largestReservation))
    }

    /// Ends the row being filled: refuses a misused key path, a row of another batch or a NaN,
    /// keeps the row and starts the next one from the defaults.
    /// - Throws: `.misuse` for a key path or target the row was given wrongly, or when the row
    ///   is not `batch`'s (a `BatchRow` kept from another batch's closure and assigned to this
    ///   one's); `.validation` for a NaN value.
    @usableFromInline
    mutating func finishRow(of batch: BatchIdentity) throws {
        guard self.batch === batch else {
            throw StrataError.misuse(
                """
                a batchInsert closure assigned its row a BatchRow kept from another batch; nothing was staged. \
                A row is valid only inside the closure it is passed to: set its values, do not replace it
                """)
        }
        if let misuse = columns.misuse { throw misuse }
        for value in values {
            if case .real(let number) = value, number.isNaN {
                throw StrataError.validation([
                    ValidationIssue(
                        entity: model.name, property: "row \(rows.count)",
                        message: "a batch row holds NaN, which cannot be stored; nothing was staged")
                ])
            }
        }
        // The finished row moves into `rows` and the defaults take its place, with no copy.
        var finished = model.defaults
        swap(&finished, &values)
        rows.append(finished)
    }

    /// The staged batch, with every finished row.
    var staged: StagedInsert {
        StagedInsert(model: model, number: number, rows: rows, clash: clash, uniqueColumns: uniqueColumns)
    }

    /// The column of a stored attribute's key path, without remembering it (for reads); nil for
    /// any other key path.
    @usableFromInline
    func attributeColumn(_ keyPath: AnyKeyPath) -> Int? {
        columns.lookUp(keyPath, model: model, relationship: false)
    }

    /// The column of a stored attribute's key path, remembered for the rows that follow; nil,
    /// with the misuse recorded, for any other key path.
    @usableFromInline
    mutating func learnAttributeColumn(_ keyPath: AnyKeyPath) -> Int? {
        columns.column(keyPath, model: model, relationship: false)
    }

    /// The object ID a to-one relationship of the row being filled links to, nil when unset.
    func target(_ keyPath: AnyKeyPath) -> ObjectID? {
        guard let column = columns.lookUp(keyPath, model: model, relationship: true),
            case .integer(let key) = values[column],
            let relation = model.relations[model.columnProperties[column]]
        else { return nil }
        return ObjectID(storeIdentifier: columns.storeIdentifier, entityName: relation.target.name, primaryKey: key)
    }

    /// Links a to-one relationship of the row being filled to a saved object (nil clears it);
    /// records a misuse for a key path or target that does not fit.
    mutating func setTarget(_ keyPath: AnyKeyPath, _ id: ObjectID?) {
        guard let column = columns.column(keyPath, model: model, relationship: true) else { return }
        guard let id else {
            values[column] = .null
            return
        }
        guard let relation = model.relations[model.columnProperties[column]],
            id.storeIdentifier == columns.storeIdentifier, id.entityName == relation.target.name,
            case .permanent(let key) = id.kind
        else {
            columns.recordBadTarget(id, keyPath: keyPath, model: model)
            return
        }
        values[column] = .integer(key)
    }
}

/// The identity of one batch insert's staging (compared by reference).
@usableFromInline
final class BatchIdentity: Sendable {
    @usableFromInline init() {}
}

import StrataStorage

/// A batch insert, update or delete as staged by a context, waiting for its `save()`.
enum StagedBatch {
    case insert(StagedInsert)
    case update(StagedUpdate)
    case delete(StagedDelete)

    var model: EntityModel {
        switch self {
        case .insert(let batch): batch.model
        case .update(let batch): batch.model
        case .delete(let batch): batch.model
        }
    }
}

/// Rows to insert, with what to do when a unique value is taken.
struct StagedInsert {
    enum Clash {
        case fail
        case ignore
        case update(columns: [Int])
    }

    let model: EntityModel
    let number: Int
    let rows: [ContiguousArray<StoredValue>]
    let clash: Clash
    /// The unique constraint an upsert matches on (empty for `.fail`).
    let uniqueColumns: [Int]
}

/// Rows matching a filter, and what to set in each.
struct StagedUpdate {
    enum Operation {
        case value(StoredValue)
        case add(StoredValue)
        case multiply(StoredValue)
    }

    let model: EntityModel
    let number: Int
    let filter: Filter?
    let assignments: [(column: Int, operation: Operation)]
}

/// Rows matching a filter, deleted with their delete rules.
struct StagedDelete {
    let model: EntityModel
    let number: Int
    let filter: Filter?
}

import Foundation
import StrataStorage

/// What SQLite's reader and commit code need of the engine they serve: the tables and joins of
/// its schema, and the store's identity for the object IDs in conflicts.
///
/// ``SQLiteEngine`` is one; a migration's ``SQLiteTransactionEngine`` (laid out as another
/// version of the schema, over the open's write transaction) is the other, so both read and
/// commit through the same code.
protocol SQLiteLayoutSource: AnyObject, Sendable {
    var storeIdentifier: UUID { get }
    /// Every join's layout, for the unlinks a delete needs.
    var joins: [SQLiteJoinLayout] { get }
    /// The layout of an entity.
    /// - Throws: `.misuse` when the number is out of range (or the source was closed).
    func table(_ entity: Int) throws(StrataError) -> SQLiteTableLayout
    /// The layout of a join.
    /// - Throws: `.misuse` when the number is out of range (or the source was closed).
    func join(_ number: Int) throws(StrataError) -> SQLiteJoinLayout
}

extension SQLiteEngine: SQLiteLayoutSource {}

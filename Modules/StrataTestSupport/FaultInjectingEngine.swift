public import Foundation
import Strata
public import StrataStorage

/// A ``StorageEngine`` that forwards to a real engine, fails commits as a ``FaultController``
/// says (as an I/O error would), returns rows of the wrong length when it says so (as an engine
/// that breaks its contract would), and records where every engine and reader call ran.
///
/// A failed write happens inside the real engine's transaction: the chosen row is made invalid
/// (a wrong value count, or an impossible expected version), so the engine applies the writes
/// before it, then fails and must roll back. The caller sees ``StrataError/io(_:native:)``.
public final class FaultInjectingEngine: SetWritingEngine {
    let base: any StorageEngine
    let faults: FaultController

    init(base: any StorageEngine, faults: FaultController) {
        self.base = base
        self.faults = faults
    }

    /// The wrapped engine's store identifier.
    public var storeIdentifier: UUID { base.storeIdentifier }
    /// The wrapped engine's schema version.
    public var schemaVersion: Int { base.schemaVersion }

    /// Begins a read snapshot on the wrapped engine, recording the call.
    public func makeReader() throws -> any StoreReader {
        faults.record("makeReader")
        return ObservedReader(base: try base.makeReader(), faults: faults)
    }

    /// Allocates keys on the wrapped engine, recording the call.
    public func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        faults.record("allocateKeys")
        return try base.allocateKeys(entity: entity, count: count)
    }

    /// Closes the wrapped engine.
    public func close() { base.close() }

    /// Commits through the wrapped engine unless the controller injects a fault.
    /// - Throws: ``StrataError/io(_:native:)`` or ``StrataError/busy(_:native:)`` for an injected fault, and
    ///   whatever the wrapped engine throws.
    public func commit(_ changes: ChangeSet) throws {
        faults.record("commit")
        let writes = changes.deletes.count + changes.updates.count + changes.touches.count + changes.inserts.count
        switch faults.nextCommit(writes: writes) {
        case .pass:
            try base.commit(changes)
        case .failBeforeWriting(let number):
            throw StrataError.io("injected fault: commit #\(number) failed before writing anything")
        case .busy(let number):
            throw StrataError.busy("injected fault: commit #\(number) found the store locked by another writer")
        case .damageWrite(let n):
            do {
                try base.commit(Self.damaging(changes, write: n))
            } catch {
                throw StrataError.io(
                    "injected fault: row write \(n) of \(writes) failed inside the transaction (\(error))")
            }
            throw StrataError.misuse("the engine accepted a damaged row write \(n); it must reject it")
        }
    }

    /// Whether the wrapped engine runs set writes.
    public var acceptsSetWrites: Bool { (base as? any SetWritingEngine)?.acceptsSetWrites ?? false }

    /// Commits through the wrapped engine, returning its set writes' results, unless the controller
    /// injects a fault (as ``commit(_:)``; a damaged write damages a row write of the change set).
    /// - Throws: as ``commit(_:)``; `.misuse` when the wrapped engine does not run set writes.
    public func commitReturningResults(_ changes: ChangeSet) throws -> [SetWriteResult] {
        guard let setWriting = base as? any SetWritingEngine, setWriting.acceptsSetWrites else {
            try changes.refuseSetWrites("the wrapped engine")
            try commit(changes)
            return []
        }
        faults.record("commit")
        let writes = changes.deletes.count + changes.updates.count + changes.touches.count + changes.inserts.count
        switch faults.nextCommit(writes: writes) {
        case .pass:
            return try setWriting.commitReturningResults(changes)
        case .failBeforeWriting(let number):
            throw StrataError.io("injected fault: commit #\(number) failed before writing anything")
        case .busy(let number):
            throw StrataError.busy("injected fault: commit #\(number) found the store locked by another writer")
        case .damageWrite(let n):
            do {
                _ = try setWriting.commitReturningResults(Self.damaging(changes, write: n))
            } catch {
                throw StrataError.io(
                    "injected fault: row write \(n) of \(writes) failed inside the transaction (\(error))")
            }
            throw StrataError.misuse("the engine accepted a damaged row write \(n); it must reject it")
        }
    }

    /// The change set with its `n`th row write made invalid.
    static func damaging(_ changes: ChangeSet, write n: Int) -> ChangeSet {
        var damaged = changes
        var index = n - 1
        if index < damaged.deletes.count {
            damaged.deletes[index].expectedVersion = Int64.max
            return damaged
        }
        index -= damaged.deletes.count
        if index < damaged.updates.count {
            damaged.updates[index].values.append(.null)
            return damaged
        }
        index -= damaged.updates.count
        if index < damaged.touches.count {
            damaged.touches[index].expectedVersion = Int64.max
            return damaged
        }
        index -= damaged.touches.count
        damaged.inserts[index].values.append(.null)
        return damaged
    }
}

/// A reader that records where each read runs and shapes the rows it returns as the
/// controller says.
private final class ObservedReader: StoreReader {
    let base: any StoreReader
    let faults: FaultController

    init(base: any StoreReader, faults: FaultController) {
        self.base = base
        self.faults = faults
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        faults.record("row")
        return try base.row(entity: entity, key: key).map(faults.shape)
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        faults.record("rows")
        return try base.rows(for: plan).map(faults.shape)
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        faults.record("rows")
        try base.forEachRow(for: plan) { try body(faults.shape($0)) }
    }

    func expectedRowCount(for plan: FetchPlan) -> Int? {
        base.expectedRowCount(for: plan)
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        faults.record("count")
        return try base.count(entity: entity, filter: filter)
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        faults.record("linkedKeys")
        return try base.linkedKeys(join: join, from: side, key: key)
    }

    func forEachLink(join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void) throws {
        faults.record("links")
        try base.forEachLink(join: join, from: side, keys: keys, body)
    }

    func close() { base.close() }
}

extension EngineConfiguration {
    /// Wraps an engine configuration so `faults` can fail its commits and observe its calls.
    ///
    /// ```swift
    /// let faults = FaultController()
    /// let engine = EngineConfiguration.faultInjecting(.lmdb(at: url), faults: faults)
    /// ```
    public static func faultInjecting(_ base: EngineConfiguration, faults: FaultController) -> EngineConfiguration {
        EngineConfiguration(name: "\(base.name)+faults", location: base.location) { schema in
            FaultInjectingEngine(base: try base.open(schema), faults: faults)
        }
    }
}

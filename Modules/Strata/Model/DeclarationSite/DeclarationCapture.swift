import StrataStorage
import Synchronization

/// What one `@Attribute` or `@Relationship` declaration says beyond its type: its default and
/// options, or its inverse and delete rule.
/// `@unchecked Sendable` for ``DeclarationCapture``'s lock: the inverse key path names a stored
/// property (no captured subscript arguments), so nothing in it can be shared mutably.
enum CapturedDeclaration: @unchecked Sendable {
    /// `typedDefault` is the declared default as the property's own Swift type; `originalName`
    /// the name older stores have for a renamed attribute.
    case attribute(
        defaultValue: StoredValue, typedDefault: any Sendable, options: AttributeOptions, originalName: String?)
    case relationship(inverse: AnyKeyPath?, deleteRule: DeleteRule)
}

/// Collects the declarations of the wrappers initialised while the schema builder constructs a
/// model class's prototype, so that wrappers need not store their defaults and options.
///
/// Only the thread running ``capture(_:)`` records; a wrapper initialised on any other thread
/// (or outside a capture) costs one relaxed atomic load and records nothing.
@usableFromInline
enum DeclarationCapture {
    /// The thread that is capturing, or 0.
    private static let capturingThread = Atomic<UInt>(0)

    /// Whether any thread is capturing (the wrapper then calls ``record(_:_:)``, which checks
    /// that it is this one): one relaxed atomic load.
    @usableFromInline
    static var isCapturing: Bool { capturingThread.load(ordering: .relaxed) != 0 }

    /// Site → declaration, recorded so far; touched only by the capturing thread (the lock
    /// is never contended: it makes the confinement checkable).
    private static let recorded = Mutex<[UInt32: CapturedDeclaration]>([:])

    /// Runs `body` (which constructs a prototype) and returns what its wrappers declared, by
    /// site. Call it under ``ModelRegistry``'s lock; captures on one thread may nest.
    static func capture<T>(_ body: () throws -> T) rethrows -> (T, [UInt32: CapturedDeclaration]) {
        let outerThread = capturingThread.exchange(CurrentThread.id, ordering: .sequentiallyConsistent)
        let outer = recorded.withLock { recorded in
            let outer = recorded
            recorded = [:]
            return outer
        }
        defer {
            recorded.withLock { $0 = outer }
            capturingThread.store(outerThread, ordering: .sequentiallyConsistent)
        }
        let value = try body()
        return (value, recorded.withLock { $0 })
    }

    /// Records the declaration at `site` if this thread is capturing.
    @inline(__always)
    static func record(_ site: UInt32, _ declaration: () -> CapturedDeclaration) {
        let thread = capturingThread.load(ordering: .relaxed)
        guard thread != 0, thread == CurrentThread.id, recorded.withLock({ $0[site] == nil }) else { return }
        let captured = declaration()
        recorded.withLock { $0[site] = captured }
    }
}

import Synchronization

/// What one `@Attribute` or `@Relationship` declaration says beyond its type: its default and
/// options, or its inverse and delete rule.
enum CapturedDeclaration {
    /// `typedDefault` is the declared default as the property's own Swift type.
    case attribute(defaultValue: StoredValue, typedDefault: any Sendable, options: AttributeOptions)
    case relationship(inverse: AnyKeyPath?, deleteRule: DeleteRule)
}

/// The identity of a property declaration: its source position (`#fileID`, `#line`,
/// `#column` of the property, which Swift passes to the wrapper's initialiser), mixed into 32
/// bits. It is a property wrapper's whole per-instance storage.
///
/// Every instance of a class gets the same site for the same property, so an accessor finds
/// its column by comparing this number with the model's, without forming a key path. The
/// schema builder rejects the (one in billions) model whose properties' sites collide.
enum PropertySite {
    /// Two multiply-xor rounds over the file's address and the position: every wrapper
    /// initialiser runs this, so it stays a handful of instructions.
    @inline(__always)
    static func make(fileID: StaticString, line: UInt, column: UInt) -> UInt32 {
        let file = UInt64(UInt(bitPattern: fileID.utf8Start)) &* 0x9E37_79B9_7F4A_7C15
        let position = UInt64(truncatingIfNeeded: line) &<< 20 ^ UInt64(truncatingIfNeeded: column)
        let hash = (file ^ position) &* 0xD6E8_FEB8_6659_FD93
        let site = UInt32(truncatingIfNeeded: hash &>> 32)
        return site == 0 ? 1 : site
    }
}

/// Collects the declarations of the wrappers initialised while the schema builder constructs a
/// model class's prototype, so that wrappers need not store their defaults and options.
///
/// Only the thread running ``capture(_:)`` records; a wrapper initialised on any other thread
/// (or outside a capture) costs one relaxed atomic load and records nothing.
enum DeclarationCapture {
    /// The thread that is capturing, or 0.
    private static let capturingThread = Atomic<UInt>(0)
    /// Site → declaration, recorded so far; touched only by the capturing thread.
    nonisolated(unsafe) private static var recorded: [UInt32: CapturedDeclaration] = [:]

    /// Runs `body` (which constructs a prototype) and returns what its wrappers declared, by
    /// site. Call it under ``ModelRegistry``'s lock; captures on one thread may nest.
    static func capture<T>(_ body: () throws -> T) rethrows -> (T, [UInt32: CapturedDeclaration]) {
        let outerThread = capturingThread.exchange(CurrentThread.id, ordering: .sequentiallyConsistent)
        let outer = recorded
        recorded = [:]
        defer {
            recorded = outer
            capturingThread.store(outerThread, ordering: .sequentiallyConsistent)
        }
        let value = try body()
        return (value, recorded)
    }

    /// Records the declaration at `site` if this thread is capturing.
    @inline(__always)
    static func record(_ site: UInt32, _ declaration: () -> CapturedDeclaration) {
        let thread = capturingThread.load(ordering: .relaxed)
        guard thread != 0, thread == CurrentThread.id, recorded[site] == nil else { return }
        recorded[site] = declaration()
    }
}

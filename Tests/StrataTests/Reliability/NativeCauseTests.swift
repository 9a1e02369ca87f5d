import Foundation
import Strata
import Testing

/// Errors keep their cause: a store-level failure is classified the same on every engine, and
/// carries the engine's own code, message and statement or operation.
@Suite("native causes")
struct NativeCauseTests {
    /// Saves an account named `name` and returns the `StrataError` the save threw (nil if none).
    static func saveAccount(_ container: PersistentContainer, _ name: String) async -> StrataError? {
        do {
            try await container.performUnitOfWork(retries: .none) { context in
                Account(context: context).name = name
                try context.save()
            }
            return nil
        } catch {
            return error as? StrataError
        }
    }

    /// The native error each engine reports for a stored duplicate of a unique value.
    static func expectedUniqueCause(_ kind: EngineKind, _ native: NativeError) {
        switch kind {
        case .memory: #expect(native.engine == "memory")
        case .sqlite:
            // SQLITE_CONSTRAINT_UNIQUE, on the row's INSERT.
            #expect(native.engine == "sqlite" && native.code == 2067, "\(native)")
            #expect(native.sql?.hasPrefix("INSERT INTO \"Account\"") == true, "\(native)")
        case .lmdb:
            // MDB_KEYEXIST, putting the unique index entry.
            #expect(native.engine == "lmdb" && native.code == -30799 && native.operation == "mdb_put", "\(native)")
            #expect(native.sql == nil)
        case .postgres:
            // SQLSTATE 23505 (unique_violation), packed as PostgreSQL's MAKE_SQLSTATE packs it, with
            // the server's message naming the violated index of Account, and where it happened.
            #expect(native.engine == "postgres" && native.code == packedSQLState("23505"), "\(native)")
            #expect(native.message.contains("Account_name"), "\(native)")
            #expect(native.sql != nil || native.operation != nil, "\(native)")
        }
    }

    /// A SQLSTATE as one integer, six bits a character (PostgreSQL's `MAKE_SQLSTATE`), which is
    /// how the PostgreSQL engine fills `NativeError.code`.
    static func packedSQLState(_ state: String) -> Int {
        // PGSIXBIT(c) = (c - '0') & 0x3F; the first character in the lowest six bits.
        let sixBits = state.utf8.map { (Int($0) - 0x30) & 0x3F }
        return sixBits.indices.reduce(0) { code, index in code + (sixBits[index] << (6 * index)) }
    }

    @Test("a stored duplicate is the same constraintViolation on every engine, with each engine's native code")
    func uniqueClash() async throws {
        var classifications: [StrataError] = []
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            defer { container.close() }
            #expect(await Self.saveAccount(container, "Cash") == nil)
            let error = try #require(await Self.saveAccount(container, "Cash"), "\(kind): a duplicate name was saved")
            let native = try #require(error.native, "\(kind): no native cause under \(error)")
            Self.expectedUniqueCause(kind, native)
            #expect(error.description.contains("Uniqueness constraint on Account(name) violated"), "\(error)")
            #expect(error.description.contains("choose different values"), "\(error)")
            #expect(error.description.contains(native.description), "\(error)")
            classifications.append(error.withoutNative)
        }
        #expect(
            classifications
                == [StrataError](
                    repeating: .constraintViolation(entity: "Account", attributes: ["name"]),
                    count: EngineKind.allCases.count))
    }

    @Test("a real clash equals the case written without a cause", arguments: EngineKind.allCases)
    func clashEqualsCaseWithoutCause(_ kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        #expect(await Self.saveAccount(container, "Cash") == nil)
        let error = try #require(await Self.saveAccount(container, "Cash"), "a duplicate name was saved")
        #expect(error.native != nil, "the engine's cause is kept: \(error)")
        #expect(error == .constraintViolation(entity: "Account", attributes: ["name"]), "\(error)")
        #expect(error.hashValue == StrataError.constraintViolation(entity: "Account", attributes: ["name"]).hashValue)
        #expect(error != .constraintViolation(entity: "Account", attributes: ["currency"]))
        #expect(error != .constraintViolation(entity: "Seat", attributes: ["name"]))
    }

    @Test("equality and hashing ignore the native cause, and only it")
    func equalityIgnoresCause() {
        let locked = NativeError(engine: "sqlite", code: 5, message: "database is locked", sql: "BEGIN IMMEDIATE")
        let keyExists = NativeError(engine: "lmdb", code: -30799, message: "MDB_KEYEXIST", operation: "mdb_put")
        let pairs: [(StrataError, StrataError)] = [
            (
                .constraintViolation(entity: "Account", attributes: ["name"], native: keyExists),
                .constraintViolation(entity: "Account", attributes: ["name"])
            ),
            (.storeCorrupt("bad page", native: locked), .storeCorrupt("bad page", native: keyExists)),
            (.notAStore(path: "/s", reason: "garbage", native: locked), .notAStore(path: "/s", reason: "garbage")),
            (.storeFull("map full", native: locked), .storeFull("map full")),
            (.busy("locked", native: locked), .busy("locked")),
            (.io("read", native: locked), .io("read")),
            (.misuse("closed", native: locked), .misuse("closed")),
            (.commitOutcomeUnknown("lost", native: locked), .commitOutcomeUnknown("lost")),
            (
                .retriesExhausted(attempts: 1, errors: [.busy("locked", native: locked)]),
                .retriesExhausted(attempts: 1, errors: [.busy("locked")])
            ),
        ]
        for (lhs, rhs) in pairs {
            #expect(lhs == rhs, "\(lhs) vs \(rhs)")
            #expect(lhs.hashValue == rhs.hashValue, "\(lhs) vs \(rhs)")
            #expect(Set([lhs, rhs]).count == 1)
        }
        // Another case, another detail or another entity is another error, cause or not.
        #expect(StrataError.busy("locked", native: locked) != .io("locked", native: locked))
        #expect(StrataError.busy("locked") != .busy("full"))
        #expect(
            StrataError.constraintViolation(entity: "Account", attributes: ["name"])
                != .constraintViolation(entity: "Seat", attributes: ["name"]))
        #expect(
            StrataError.retriesExhausted(attempts: 1, errors: [.busy("a")])
                != .retriesExhausted(attempts: 2, errors: [.busy("a")]))
        // An engine failure is its native error: nothing else to tell two apart.
        #expect(StrataError.engineFailure(locked) != .engineFailure(keyExists))
        #expect(StrataError.engineFailure(locked) == .engineFailure(locked))
    }

    @Test("native reads the cause; a retried unit of work gives its last attempt's; withoutNative strips all")
    func nativeAndWithoutNative() {
        let first = NativeError(engine: "sqlite", code: 5, message: "database is locked", sql: "BEGIN IMMEDIATE")
        let last = NativeError(engine: "sqlite", code: 517, message: "database is locked", sql: "BEGIN IMMEDIATE")
        let exhausted = StrataError.retriesExhausted(
            attempts: 2, errors: [.busy("first", native: first), .busy("second", native: last)])
        #expect(exhausted.native == last)
        #expect(exhausted.withoutNative == .retriesExhausted(attempts: 2, errors: [.busy("first"), .busy("second")]))
        #expect(exhausted.withoutNative.native == nil)
        #expect(StrataError.engineFailure(first).native == first)
        #expect(StrataError.engineFailure(first).withoutNative == .engineFailure(first), "engineFailure is its cause")
        #expect(StrataError.conflict([]).native == nil && StrataError.io("disk").native == nil)
        #expect(
            StrataError.io("disk", native: first).description.hasSuffix(
                "(Cause: sqlite code 5 \"database is locked\" in BEGIN IMMEDIATE.)"))
    }
}

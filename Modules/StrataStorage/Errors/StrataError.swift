public import Foundation

/// Every failure Strata reports, classified so callers can decide what to do next.
///
/// Engines map their own result codes into these cases; domain layers wrap them in their own
/// errors where that helps the caller. Each case's ``description`` says what happened and what
/// to do about it.
///
/// ```swift
/// do {
///     try await context.perform { try context.save() }
/// } catch StrataError.conflict(let conflicts) {
///     // Another context saved these objects first: re-run the whole unit of work.
/// } catch StrataError.busy {
///     // Another writer held the store too long: retry later.
/// } catch let error as StrataError {
///     print(error, error.native?.code ?? 0)  // the classification, and the engine's own code
/// }
/// ```
///
/// Cases an engine failure produces carry the engine's ``NativeError`` (its name, native code,
/// message, and the SQL or operation) as their `native:` payload, nil when Strata itself found
/// the problem; ``native`` reads it whatever the case. Match on the case, not on the native code:
/// the case is the same on every engine. Equality and hashing ignore the `native:` cause, so
/// `error == .constraintViolation(entity: "Account", attributes: ["name"])` holds for a clash
/// reported by any engine (see ``==(_:_:)``).
public enum StrataError: Error, Sendable, Hashable {
    /// Rows changed since this context read them; nothing was written.
    case conflict([VersionConflict])
    /// No object with this ID exists in the store (it was never saved, or it was deleted).
    case objectNotFound(ObjectID)
    /// A URI string could not be turned into an object ID of this store.
    case invalidURI(String, reason: InvalidURIReason)
    /// The ID names an object of another entity than the class asked for (its entity name,
    /// then the name of the class asked for).
    case wrongEntity(ObjectID, expected: String)
    /// Values broke the model's rules (required values, deny rules, NaN); nothing was written.
    case validation([ValidationIssue])
    /// A uniqueness constraint would be broken; nothing was written.
    ///
    /// The entity and the attributes come from the schema (the unique index the values clash
    /// with), never from an engine's message text; `native` is the engine's report when the
    /// engine found it (nil when the context found it before writing).
    case constraintViolation(entity: String, attributes: [String], native: NativeError? = nil)
    /// The store's data is damaged.
    case storeCorrupt(String, native: NativeError? = nil)
    /// The file is not a store of this engine (garbage, empty, or another engine's store).
    case notAStore(path: String, reason: String, native: NativeError? = nil)
    /// The store has no room left (disk full, map full past its growth limit, file size limit).
    ///
    /// Its ``description`` adds "Free disk space or raise the store's size limit" to the detail,
    /// unless the detail already says what to do: a detail that ends with a full stop gives its
    /// own advice (e.g. an LMDB map at `maximumMapSize`, where freeing disk space does not help).
    case storeFull(String, native: NativeError? = nil)
    /// The store is locked by another writer for longer than the busy timeout.
    case busy(String, native: NativeError? = nil)
    /// An operating-system or engine I/O failure.
    case io(String, native: NativeError? = nil)
    /// A commit was sent, the reply never came (the connection dropped, or the server stopped
    /// answering), and the engine could not find out in time whether the commit was applied: it
    /// may or may not be in the store. Not retried by `performUnitOfWork`, since a blind retry
    /// could apply the work twice. The message says how to check; check the data (or an
    /// idempotency key stored with the work) before doing the work again.
    ///
    /// The PostgreSQL engine resolves most such failures itself (it fences the lost session and
    /// looks the commit up, returning normally or throwing `.busy` with nothing written); this
    /// case remains only when the server stayed unreachable past the engine's bound.
    case commitOutcomeUnknown(String, native: NativeError? = nil)
    /// The API was used against its contract (outside `perform`, with another context's object…),
    /// or the engine refused a statement as misuse.
    case misuse(String, native: NativeError? = nil)
    /// The store was created with another schema version, or its recorded schema differs from the
    /// model's (``RecordedSchema/differences(from:to:)``, empty when only the versions differ),
    /// and no migration covers the difference (the same version with another shape is never
    /// migrated). Nothing was read or written.
    case schemaMismatch(storeVersion: Int, modelVersion: Int, differences: [SchemaDifference] = [])
    /// The model is a newer version than the store, but these differences cannot be migrated
    /// without user code (a type change, a required attribute without a default…): they need a
    /// custom migration stage. Nothing was written.
    case migrationNotInferable(storeVersion: Int, modelVersion: Int, refused: [SchemaDifference])
    /// The store was written by a newer version of the model than this app's: it was not
    /// touched. Open it with the newer app, or restore an older copy of the store.
    case storeNewerThanModel(storeVersion: Int, modelVersion: Int)
    /// The persistent history after `token` was requested, but the history before
    /// `oldestKept` was deleted (trimmed) past it: the transactions in between are gone, so
    /// reading or observing from `token` would miss some. Start again from a fresh token
    /// (re-reading the data itself), and register a history cursor to keep trimming behind you.
    case historyTrimmed(after: Int64, oldestKept: Int64)
    /// A custom migration stage failed; the store was left at its old version, unchanged. The
    /// core rethrows the stage's own error in its place; engines and the kit see this case.
    case migrationStageFailed(fromVersion: Int, toVersion: Int, reason: String)
    /// The model classes cannot form a schema (missing inverse, unsupported type…).
    case invalidSchema(String)
    /// A stored value does not decode into its attribute's type: an enum raw value that is not
    /// one of the cases, or JSON that does not decode into a `Codable` attribute (written by
    /// another model version, or by hand). The store is not damaged; no object was made from
    /// the row.
    case undecodableValue(entity: String, attribute: String, key: Int64, reason: String)
    /// The engine failed with a result code Strata does not classify. It is not known to mean
    /// damage: the engine's name, its native code, its message and the SQL or operation are kept
    /// as they were.
    case engineFailure(NativeError)
    /// ``Strata/ContextFactory/performUnitOfWork(retries:_:)`` ran out of attempts: every attempt
    /// failed with a retryable error (`.conflict` or `.busy`), listed in order.
    case retriesExhausted(attempts: Int, errors: [StrataError])
}

/// One row whose stored version differs from the version a context read.
public struct VersionConflict: Sendable, Hashable, CustomStringConvertible {
    /// The conflicting object.
    public var objectID: ObjectID
    /// The version the saving context read; 0 for a row it did not see (an insert's key, or a
    /// row that appeared in a guarded result set, see ``ResultSetGuard``).
    public var expectedVersion: Int64
    /// The version now stored, or nil when the row was deleted (or, for inserts, already exists).
    public var storedVersion: Int64?
    /// The history cursor whose move failed, when the conflict is on a cursor rather than a row
    /// (``HistoryCursorMove``): ``expectedVersion`` is then the token the consumer read (-1: no
    /// cursor), ``storedVersion`` the token stored (nil: no cursor), and ``objectID`` names no
    /// object (entity `strata.historyCursor`, no key). Nil for a row.
    public var historyCursor: String?

    /// Describes one conflicting row.
    public init(objectID: ObjectID, expectedVersion: Int64, storedVersion: Int64?) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
        self.storedVersion = storedVersion
    }

    /// Describes a history cursor that is not where the saving consumer read it.
    ///
    /// ```swift
    /// let conflict = VersionConflict(historyCursor: "mailer", in: store, expectedToken: 41, storedToken: 42)
    /// ```
    /// - Parameters:
    ///   - historyCursor: the cursor's name.
    ///   - store: the store's identifier.
    ///   - expectedToken: the token the consumer read, nil when it expected no cursor.
    ///   - storedToken: the token stored, nil when there is no cursor.
    public init(historyCursor: String, in store: UUID, expectedToken: Int64?, storedToken: Int64?) {
        self.objectID = ObjectID(storeIdentifier: store, entityName: "strata.historyCursor", kind: .temporary(0))
        self.expectedVersion = expectedToken ?? -1
        self.storedVersion = storedToken
        self.historyCursor = historyCursor
    }

    public var description: String {
        if let historyCursor {
            let read = expectedVersion < 0 ? "no cursor" : "token \(expectedVersion)"
            return
                """
                history cursor \(String(reflecting: historyCursor)) (read at \(read), stored \
                \(storedVersion.map { "token \($0)" } ?? "no cursor"): another consumer of it, or a \
                setHistoryCursor call, moved it; restart the consumer from the stored cursor)
                """
        }
        let stored = storedVersion.map { "version \($0)" } ?? "deleted"
        let read = expectedVersion == 0 ? "not there when read" : "read version \(expectedVersion)"
        return
            """
            \(objectID.entityName) \(objectID.primaryKey.map(String.init) ?? "?") (\(read), stored \(stored))
            """
    }
}

/// One broken model rule.
public struct ValidationIssue: Sendable, Hashable, CustomStringConvertible {
    /// The entity whose rule was broken.
    public var entity: String
    /// The property (attribute or relationship) concerned.
    public var property: String
    /// What is wrong, in words.
    public var message: String

    /// Describes one broken rule.
    public init(entity: String, property: String, message: String) {
        self.entity = entity
        self.property = property
        self.message = message
    }

    public var description: String { "\(entity).\(property): \(message)" }
}

/// Why a URI string was rejected.
public enum InvalidURIReason: String, Sendable, Hashable {
    /// The string does not have the shape of an object URI.
    case malformed = "it is not a Strata object URI (strata://<store-uuid>/<Entity>/p<key>)"
    /// The URI names an entity this container's schema does not have.
    case unknownEntity = "its entity is not in this container's schema"
    /// The URI names an object of another store.
    case otherStore = "it belongs to another store"
    /// The URI names an object that was never saved.
    case temporary = "it names an unsaved object; save first and use the permanent ID"
}

extension StrataError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .conflict(let conflicts):
            return
                """
                Save conflict: \(conflicts.map(\.description).joined(separator: "; ")) changed since this context \
                read them. Nothing was written; discard this context and re-run the whole unit of work in a fresh \
                one.
                """
        case .objectNotFound(let id) where id.isTemporary:
            return """
                No unsaved object \(id.uriString) in this context: a temporary ID names an object only in the \
                context that inserted it, until that object is saved, deleted or rolled back. After save(), read \
                the object's objectID again for its permanent ID.
                """
        case .objectNotFound(let id):
            return
                "No object \(id.uriString) in the store: it was deleted or never saved. Refetch, or drop the stale ID."
        case .invalidURI(let uri, let reason):
            return "Invalid object URI \(String(reflecting: uri)): \(reason.rawValue)."
        case .wrongEntity(let id, let expected):
            return
                """
                \(id.uriString) names \(Self.article(id.entityName)) \(id.entityName), not \
                \(Self.article(expected)) \(expected). Look it up as \(id.entityName), or check where the ID came \
                from.
                """
        case .validation(let issues)
        where !issues.isEmpty && issues.allSatisfy({ $0.message.hasPrefix(AggregateAccumulator.sumOverflowMessage) }):
            // An aggregate's sum, a read: nothing was to be written.
            return "Aggregate failed: \(issues.map(\.description).joined(separator: "; ")). No result was computed."
        case .validation(let issues):
            return
                """
                Validation failed: \(issues.map(\.description).joined(separator: "; ")). Nothing was written; fix \
                the values and save again.
                """
        case .constraintViolation(let entity, let attributes, let native) where MigrationUniqueClash.isClash(native):
            return
                """
                Uniqueness constraint on \(entity)(\(attributes.joined(separator: ", "))) cannot be added: rows \
                already in the store share these values. The store was not migrated and nothing was written; \
                change or delete the duplicates with the previous model version, then open the store again.
                """
                    + Self.cause(native)
        case .constraintViolation(let entity, let attributes, let native):
            return
                """
                Uniqueness constraint on \(entity)(\(attributes.joined(separator: ", "))) violated: another \
                object already has these values. Nothing was written; choose different values.
                """
                    + Self.cause(native)
        case .storeCorrupt(let detail, let native):
            return "The store is damaged: \(detail). Restore it from a backup; do not keep writing to it."
                + Self.cause(native)
        case .notAStore(let path, let reason, let native):
            return "\(path) is not a store this engine can open: \(reason). Check the path and the engine you chose."
                + Self.cause(native)
        case .storeFull(let detail, let native):
            if detail.hasSuffix(".") {
                return "The store is full: \(detail) Retry once there is room." + Self.cause(native)
            }
            return "The store is full: \(detail). Free disk space or raise the store's size limit, then retry."
                + Self.cause(native)
        case .busy(let detail, let native):
            return "The store is busy: \(detail). Nothing was changed; retry later." + Self.cause(native)
        case .io(let detail, let native):
            return "I/O failure: \(detail). Fix the cause (the disk, file permissions or the connection to a server), "
                + "then retry." + Self.cause(native)
        case .misuse(let detail, let native):
            return "Strata misuse: \(detail)" + Self.cause(native)
        case .commitOutcomeUnknown(let detail, let native):
            return
                """
                The commit's outcome is unknown: \(Self.sentence(detail)) It may or may not have been applied, so \
                it was not retried: check whether the work is in the store before doing it again.
                """ + Self.cause(native)
        case .schemaMismatch(let storeVersion, let modelVersion, let differences):
            return Self.describeMismatch(storeVersion: storeVersion, modelVersion: modelVersion, differences)
        case .migrationNotInferable(let storeVersion, let modelVersion, let refused):
            return Self.describeRefusedMigration(storeVersion: storeVersion, modelVersion: modelVersion, refused)
        case .storeNewerThanModel(let storeVersion, let modelVersion):
            return """
                The store has schema version \(storeVersion), newer than this model's version \(modelVersion): it was \
                written by a newer version of the app. It was not touched. Open it with that version, or use a copy \
                of the store made before it was upgraded.
                """
        case .historyTrimmed(let token, let oldestKept):
            return """
                The history after token \(token) was asked for, but the history before token \(oldestKept) was \
                deleted: the transactions in between are gone. Read the data afresh and continue from the current \
                token; register a history cursor so that trimming keeps what a consumer has not read.
                """
        case .migrationStageFailed(let fromVersion, let toVersion, let reason):
            return """
                The custom migration stage from version \(fromVersion) to \(toVersion) failed: \
                \(Self.sentence(reason)) The store was left at its old version, unchanged; fix the stage and open \
                the store again.
                """
        case .invalidSchema(let detail):
            return "Invalid schema: \(detail)"
        case .undecodableValue(let entity, let attribute, let key, let reason):
            return
                """
                \(entity).\(attribute) of row \(key) holds a value this model cannot decode: \(reason). It was \
                written by another version of the model or by hand: add the missing case or field to the type, or \
                correct the stored value.
                """
        case .engineFailure(let native):
            return
                """
                The \(native.engine) engine failed: \(native). This is not known to mean damage: retry the \
                operation, and report this message if it keeps failing.
                """
        case .retriesExhausted(let attempts, let errors):
            let reasons = errors.enumerated().map { "attempt \($0.offset + 1): \(Self.shortReason($0.element))" }
            return
                """
                The unit of work failed \(attempts) time(s) with retryable errors and was given up \
                (\(reasons.joined(separator: "; "))). Nothing was written by the failed attempts; retry later or \
                allow more retries in the RetryPolicy.
                """
        }
    }
}

extension StrataError {
    /// "a" or "an" for an entity name.
    static func article(_ name: String) -> String {
        name.first.map { "AEIOUaeiou".contains($0) } == true ? "an" : "a"
    }

    /// A one-line reason, for lists of failed attempts.
    static func shortReason(_ error: StrataError) -> String {
        switch error {
        case .conflict(let conflicts): "conflict on \(conflicts.map(\.description).joined(separator: ", "))"
        case .busy(let detail, _): "busy (\(detail))"
        default: error.description
        }
    }
}

extension StrataError {
    /// `text` ending with one period.
    static func sentence(_ text: String) -> String {
        var trimmed = Substring(text)
        while let last = trimmed.last, last == "." || last == " " || last == "\n" { trimmed = trimmed.dropLast() }
        return trimmed + "."
    }
}

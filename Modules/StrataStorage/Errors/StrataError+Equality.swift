// What makes two `StrataError`s equal: the classification and its details, never the native cause.
extension StrataError {
    /// Whether two errors are the same classification with the same details, ignoring every
    /// `native:` cause (on every level, for `.retriesExhausted`).
    ///
    /// The native cause says how one engine reported the failure (its code, message and
    /// statement); it is detail, not identity. So a comparison against a case written without
    /// a cause holds whichever engine threw the error:
    ///
    /// ```swift
    /// } catch let error as StrataError
    ///     where error == .constraintViolation(entity: "Account", attributes: ["name"]) {
    ///     // Another account has this name, on SQLite, LMDB or PostgreSQL alike.
    /// }
    /// ```
    ///
    /// ``engineFailure(_:)`` is the exception: its native error is all it says, so two engine
    /// failures are equal only when their native errors are. Read ``native`` to compare causes.
    public static func == (lhs: StrataError, rhs: StrataError) -> Bool {
        lhs.identity == rhs.identity
    }

    /// Hashes what ``==(_:_:)`` compares: the classification and its details, not the native cause,
    /// so errors that differ only in their cause hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(identity)
    }

    /// The error as it is compared: every case with its details, without the `native:` causes.
    private var identity: Identity {
        switch self {
        case .conflict(let conflicts): .conflict(conflicts)
        case .objectNotFound(let id): .objectNotFound(id)
        case .invalidURI(let uri, let reason): .invalidURI(uri, reason)
        case .wrongEntity(let id, let expected): .wrongEntity(id, expected)
        case .validation(let issues): .validation(issues)
        case .constraintViolation(let entity, let attributes, _): .constraintViolation(entity, attributes)
        case .storeCorrupt(let detail, _): .storeCorrupt(detail)
        case .notAStore(let path, let reason, _): .notAStore(path, reason)
        case .storeFull(let detail, _): .storeFull(detail)
        case .busy(let detail, _): .busy(detail)
        case .io(let detail, _): .io(detail)
        case .misuse(let detail, _): .misuse(detail)
        case .commitOutcomeUnknown(let detail, _): .commitOutcomeUnknown(detail)
        case .schemaMismatch(let store, let model, let differences): .schemaMismatch(store, model, differences)
        case .migrationNotInferable(let store, let model, let refused): .migrationNotInferable(store, model, refused)
        case .storeNewerThanModel(let store, let model): .storeNewerThanModel(store, model)
        case .historyTrimmed(let token, let oldestKept): .historyTrimmed(token, oldestKept)
        case .migrationStageFailed(let from, let to, let reason): .migrationStageFailed(from, to, reason)
        case .invalidSchema(let detail): .invalidSchema(detail)
        case .undecodableValue(let entity, let attribute, let key, let reason):
            .undecodableValue(entity, attribute, key, reason)
        case .engineFailure(let native): .engineFailure(native)
        // The attempts' errors compare with this same `==`, so their causes are ignored too.
        case .retriesExhausted(let attempts, let errors): .retriesExhausted(attempts, errors)
        }
    }

    /// One case per `StrataError` case, holding what equality compares.
    private enum Identity: Hashable {
        case conflict([VersionConflict])
        case objectNotFound(ObjectID)
        case invalidURI(String, InvalidURIReason)
        case wrongEntity(ObjectID, String)
        case validation([ValidationIssue])
        case constraintViolation(String, [String])
        case storeCorrupt(String)
        case notAStore(String, String)
        case storeFull(String)
        case busy(String)
        case io(String)
        case misuse(String)
        case commitOutcomeUnknown(String)
        case schemaMismatch(Int, Int, [SchemaDifference])
        case migrationNotInferable(Int, Int, [SchemaDifference])
        case storeNewerThanModel(Int, Int)
        case historyTrimmed(Int64, Int64)
        case migrationStageFailed(Int, Int, String)
        case invalidSchema(String)
        case undecodableValue(String, String, Int64, String)
        case engineFailure(NativeError)
        case retriesExhausted(Int, [StrataError])
    }
}

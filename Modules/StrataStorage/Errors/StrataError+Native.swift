// The native layer under a `StrataError`: reading it, and stripping it.
extension StrataError {
    /// The engine's own error under this one: its name, native code, message, and the SQL or the
    /// operation; nil when Strata found the problem itself (validation, misuse of the API, a
    /// conflict) or the engine did not say.
    ///
    /// ```swift
    /// } catch let error as StrataError {
    ///     if let native = error.native { log("\(native.engine) \(native.code): \(native.message)") }
    /// }
    /// ```
    ///
    /// For ``retriesExhausted(attempts:errors:)`` it is the last attempt's.
    public var native: NativeError? {
        switch self {
        case .constraintViolation(_, _, let native), .storeCorrupt(_, let native), .notAStore(_, _, let native),
            .storeFull(_, let native), .busy(_, let native), .io(_, let native), .misuse(_, let native),
            .commitOutcomeUnknown(_, let native):
            native
        case .engineFailure(let native):
            native
        case .retriesExhausted(_, let errors):
            errors.last?.native
        case .conflict, .objectNotFound, .invalidURI, .wrongEntity, .validation, .schemaMismatch,
            .migrationNotInferable, .storeNewerThanModel, .historyTrimmed, .migrationStageFailed, .invalidSchema,
            .undecodableValue:
            nil
        }
    }

    /// The same error without its native cause (on every level, for `.retriesExhausted`): the
    /// engine-neutral classification alone, described without the engine's report.
    ///
    /// ```swift
    /// } catch let error as StrataError {
    ///     showToUser(error.withoutNative.description)  // no SQL or native message
    /// }
    /// ```
    ///
    /// Comparing does not need it: ``==(_:_:)`` already ignores the native cause.
    public var withoutNative: StrataError {
        switch self {
        case .constraintViolation(let entity, let attributes, _):
            .constraintViolation(entity: entity, attributes: attributes)
        case .storeCorrupt(let detail, _): .storeCorrupt(detail)
        case .notAStore(let path, let reason, _): .notAStore(path: path, reason: reason)
        case .storeFull(let detail, _): .storeFull(detail)
        case .busy(let detail, _): .busy(detail)
        case .io(let detail, _): .io(detail)
        case .misuse(let detail, _): .misuse(detail)
        case .commitOutcomeUnknown(let detail, _): .commitOutcomeUnknown(detail)
        case .retriesExhausted(let attempts, let errors):
            .retriesExhausted(attempts: attempts, errors: errors.map(\.withoutNative))
        case .conflict, .objectNotFound, .invalidURI, .wrongEntity, .validation, .schemaMismatch,
            .migrationNotInferable, .storeNewerThanModel, .historyTrimmed, .migrationStageFailed, .invalidSchema,
            .undecodableValue, .engineFailure:
            self
        }
    }

    /// The sentence that ends a description with the native cause, or nothing.
    static func cause(_ native: NativeError?) -> String {
        guard let native else { return "" }
        return " (Cause: \(native).)"
    }
}

/// What ``StoreSchema/checkRecorded(storeVersion:recordedJSON:path:)`` decided about a store
/// that needs no migration (``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``
/// handles older stores before it asks).
enum RecordedSchemaCheck: Sendable, Hashable {
    /// The store's recorded schema is the model's (or the schema records nothing): open it.
    case matches
    /// The store predates recorded schemas and its version matches: check that its tables or
    /// databases are the model's, then record ``StoreSchema/recorded`` (as JSON) in the same
    /// transaction, once.
    case recordNow
}

extension StoreSchema {
    /// Decides whether a store that needs no migration may open with this schema, from what the
    /// store recorded: the part of ``reconcileRecorded(storeVersion:recordedJSON:path:session:)``
    /// that compares. The version number alone never decides: a store whose recorded schema
    /// differs from ``recorded`` is refused even at the same version.
    /// - Parameters:
    ///   - storeVersion: the version number the store recorded.
    ///   - recordedJSON: the JSON the store recorded (``RecordedSchema/jsonText()``), nil when it
    ///     recorded none (a store made before recorded schemas).
    ///   - path: the store's path, for error messages.
    /// - Returns: ``RecordedSchemaCheck/recordNow`` for a store without a recorded schema opened
    ///   by a schema that has one; ``RecordedSchemaCheck/matches`` otherwise.
    /// - Throws: ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)`` when the
    ///   versions or the shapes differ; ``StrataError/storeCorrupt(_:native:)`` for unreadable
    ///   JSON; ``StrataError/notAStore(path:reason:native:)`` for JSON of a newer layout.
    func checkRecorded(
        storeVersion: Int, recordedJSON: String?, path: String
    ) throws(StrataError) -> RecordedSchemaCheck {
        var differences: [SchemaDifference] = []
        if let recordedJSON, let recorded {
            let stored = try RecordedSchema(jsonText: recordedJSON, path: path)
            differences = RecordedSchema.differences(from: stored, to: recorded)
        }
        guard storeVersion == version, differences.isEmpty else {
            throw .schemaMismatch(storeVersion: storeVersion, modelVersion: version, differences: differences)
        }
        return recordedJSON == nil && recorded != nil ? .recordNow : .matches
    }
}

extension StrataError {
    /// The message of `.schemaMismatch`: the versions, every difference, and what to do.
    static func describeMismatch(storeVersion: Int, modelVersion: Int, _ differences: [SchemaDifference]) -> String {
        var text =
            storeVersion == modelVersion
            ? "The store's schema (version \(storeVersion)) differs from the model's, which declares the same version"
            : "The store has schema version \(storeVersion) but the model is version \(modelVersion)"
        if differences.isEmpty {
            text += ". "
        } else {
            text += ". The model differs from the store's recorded schema:"
            for difference in differences { text += "\n- " + difference.description }
            text += "\n"
        }
        text += """
            A store migrates only to a higher version: if the model changed on purpose, raise its schema version \
            (the change is then inferred, or run by the stages of a MigrationPlan); otherwise open the store with \
            the model that created it (the version and the classes it had). The store was not changed.
            """
        return text
    }
}

extension StrataError {
    /// The message of `.migrationNotInferable`: the versions, every refused difference, and what to do.
    static func describeRefusedMigration(
        storeVersion: Int, modelVersion: Int, _ refused: [SchemaDifference]
    ) -> String {
        var text = """
            The store (schema version \(storeVersion)) cannot be migrated to the model's version \(modelVersion) \
            without code. These changes cannot be inferred:
            """
        for difference in refused { text += "\n- " + difference.description }
        text += "\n" + refusalAdvice(refused).joined(separator: " ") + " The store was not changed."
        return text
    }
}

extension StrataError {
    /// What to do about each kind of refused change, once per kind.
    static func refusalAdvice(_ refused: [SchemaDifference]) -> [String] {
        var advice: [String] = []
        func add(_ sentence: String) { if !advice.contains(sentence) { advice.append(sentence) } }
        for difference in refused {
            switch difference {
            case .attributeTypeChanged:
                add(
                    """
                    A type change needs a custom stage (`MigrationStage.custom`): it replaces the column, and its \
                    `didMigrate` sets the new values (read the old ones in `willMigrate`).
                    """)
            case .attributeAdded, .attributeOptionalityChanged:
                add(
                    """
                    A required attribute needs a default for the existing rows: declare one, make it optional, or \
                    fill it in a custom stage's `didMigrate`.
                    """)
            case .relationshipChanged:
                add(
                    """
                    A relationship whose target, kind or inverse changed needs a custom stage that moves the links \
                    (read them in `willMigrate`, set them in `didMigrate`).
                    """)
            default:
                add("Migrate this change through a custom stage (`MigrationStage.custom`) that transforms the data.")
            }
        }
        return advice
    }
}

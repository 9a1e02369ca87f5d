/// What an engine does after ``StoreSchema/checkRecorded(storeVersion:recordedJSON:path:)`` accepted a store.
public enum RecordedSchemaCheck: Sendable, Hashable {
    /// The store's recorded schema is the model's (or the schema records nothing): open it.
    case matches
    /// The store predates recorded schemas and its version matches: check that its tables or
    /// databases are the model's, then record ``StoreSchema/recorded`` (as JSON) in the same
    /// transaction, once.
    case recordNow
    /// The store is an older version whose differences can all be inferred, and the schema
    /// allows it (``StoreSchema/infersMigrations``): apply the plan and record its target in the
    /// same transaction (``SchemaMigrationApplier``), or roll back.
    case migrate(SchemaMigrationPlan)
}

extension StoreSchema {
    /// Decides whether a store may open with this schema, from what the store recorded.
    ///
    /// Engines call it at open, inside the transaction that reads their metadata. The version
    /// number alone never decides: a store whose recorded schema differs from ``recorded`` is
    /// refused even at the same version.
    ///
    /// ```swift
    /// let check = try schema.checkRecorded(storeVersion: version, recordedJSON: json, path: path)
    /// if check == .recordNow, let recorded = schema.recorded {
    ///     // First check that the store's tables are the ones `schema` creates, then:
    ///     try writeMetadata("schema", recorded.jsonText())
    /// }
    /// ```
    /// - Parameters:
    ///   - storeVersion: the version number the store recorded.
    ///   - recordedJSON: the JSON the store recorded (``RecordedSchema/jsonText()``), nil when it
    ///     recorded none (a store made before recorded schemas).
    ///   - path: the store's path, for error messages.
    /// - Returns: ``RecordedSchemaCheck/recordNow`` for a store without a recorded schema opened
    ///   by a schema that has one; ``RecordedSchemaCheck/migrate(_:)`` for an older store when
    ///   ``infersMigrations`` is on; ``RecordedSchemaCheck/matches`` otherwise.
    /// - Throws: ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)`` when the
    ///   versions or the shapes differ; ``StrataError/storeCorrupt(_:native:)`` for unreadable
    ///   JSON; ``StrataError/notAStore(path:reason:native:)`` for JSON of a newer layout;
    ///   ``StrataError/migrationNotInferable(storeVersion:modelVersion:refused:)`` when a migration
    ///   is allowed but needs code.
    public func checkRecorded(
        storeVersion: Int, recordedJSON: String?, path: String
    ) throws(StrataError) -> RecordedSchemaCheck {
        var differences: [SchemaDifference] = []
        if let recordedJSON, let recorded {
            let stored = try RecordedSchema(jsonText: recordedJSON, path: path)
            differences = RecordedSchema.differences(from: stored, to: recorded)
            if infersMigrations, storeVersion < version, stored.version == storeVersion {
                return .migrate(try SchemaMigrationPlan.infer(from: stored, to: recorded, renames: renames))
            }
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
            text += "."
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
        text += """

            Give the attribute a default, declare its `originalName`, or migrate through a custom stage \
            (`MigrationStage.custom`) that transforms the data. The store was not changed.
            """
        return text
    }
}

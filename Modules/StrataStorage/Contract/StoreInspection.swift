package import Foundation

/// What a store records about itself, read without a model and without writing: for tools that
/// work from the store alone (`strata inspect`, `strata verify`).
package struct StoreRecord: Sendable, Hashable {
    /// The store's UUID, which its object URIs carry.
    package var identifier: UUID
    /// The schema version the store records.
    package var schemaVersion: Int
    /// The recorded schema (``RecordedSchema/jsonText()``), nil for a store made before recorded schemas.
    package var recordedJSON: String?

    /// A record.
    package init(identifier: UUID, schemaVersion: Int, recordedJSON: String?) {
        self.identifier = identifier
        self.schemaVersion = schemaVersion
        self.recordedJSON = recordedJSON
    }
}

/// How much history a store keeps, read without decoding it: for tools that report its size
/// (`strata inspect`) or what a copy leaves behind (`strata copy`).
package struct HistorySummary: Sendable, Hashable {
    /// How many history transactions the store keeps.
    package var transactions: Int
    /// The oldest kept token, nil when the store keeps none.
    package var oldestToken: Int64?

    /// A summary.
    package init(transactions: Int, oldestToken: Int64?) {
        self.transactions = transactions
        self.oldestToken = oldestToken
    }
}

/// An engine's read-only ways into an existing store, for tools that have no model: each engine
/// offers one through a package-level factory beside its `EngineConfiguration` factory.
package struct StoreInspection: Sendable {
    /// The engine's short name, as in ``EngineConfiguration/name``.
    package var engineName: String
    /// Where the store is, for messages (never with a password).
    package var location: String
    /// Reads the store's record without writing: nil when no store exists at the location.
    /// Throws `.notAStore` for something that is not a Strata store, `.io` when it cannot be reached.
    package var readRecord: @Sendable () throws -> StoreRecord?
    /// The engine's own integrity check, without writing: each problem it reports, none when sound.
    package var integrityProblems: @Sendable () throws -> [String]
    /// Counts the kept history transactions and finds the oldest token without decoding any, in
    /// one read (its memory does not grow with the history's size).
    package var readHistorySummary: @Sendable () throws -> HistorySummary
    /// Opens the store for a schema, as a container does (an existing store only).
    package var configuration: EngineConfiguration
    /// The problems of the store file's own structure, found without reading through the engine:
    /// for an engine that trusts its file (LMDB), whose reads of a damaged page can stop the
    /// process. None when sound, or when no store file is there (``readRecord`` says why); a
    /// store with any is not read further.
    package var structuralProblems: @Sendable () throws -> [String]

    /// An inspection.
    package init(
        engineName: String, location: String, readRecord: @escaping @Sendable () throws -> StoreRecord?,
        integrityProblems: @escaping @Sendable () throws -> [String],
        readHistorySummary: @escaping @Sendable () throws -> HistorySummary, configuration: EngineConfiguration,
        structuralProblems: @escaping @Sendable () throws -> [String] = { [] }
    ) {
        self.structuralProblems = structuralProblems
        self.engineName = engineName
        self.location = location
        self.readRecord = readRecord
        self.integrityProblems = integrityProblems
        self.readHistorySummary = readHistorySummary
        self.configuration = configuration
    }
}

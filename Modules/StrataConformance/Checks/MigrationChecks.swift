import Foundation
import Strata

/// Schema evolution: every change inference covers keeps the data and leaves indexes and
/// constraints working; staged plans run their custom stages in order, across skipped
/// versions; refused changes, same-version drift and newer stores are typed errors that leave
/// the store as it was.
enum MigrationChecks {
    static let group = "Migration"

    static let all: [ConformanceCheck] =
        MigrationAttributeChecks.all + MigrationEntityChecks.all + MigrationRelationshipChecks.all
        + MigrationStageChecks.all + MigrationRefusalChecks.all + MigrationDriftChecks.all
        + MigrationProcessChecks.all

    /// The notes every `Note` check starts from: (title, rank, body).
    static let notes: [(title: String, rank: Int, body: String?)] = [
        ("Dune", 3, "sand"), ("Solaris", 1, nil), ("Ubik", 2, "spray"),
    ]

    /// Makes the main store at `version` with `KitV1`'s shape, holding ``notes``.
    static func seedNotes(_ kit: ConformanceHarness, version: Int = 1) async throws {
        let container = try kit.open(schema: MigrationModels.schema(KitV1.self, version: version))
        defer { container.close() }
        try await container.performUnitOfWork { context in
            for note in notes {
                let object = KitV1.Note(context: context)
                object.title = note.title
                object.rank = note.rank
                object.body = note.body
            }
            try context.save()
        }
    }

    /// The `KitV1` notes of the main store as "title rank body", sorted, opened at `version`.
    static func readV1Notes(_ kit: ConformanceHarness, version: Int = 1) async throws -> [String] {
        let container = try kit.open(schema: MigrationModels.schema(KitV1.self, version: version))
        defer { container.close() }
        return try await container.read { context in
            try context.fetch(FetchRequest<KitV1.Note>(sortBy: [SortDescriptor(\.title)])).map {
                "\($0.title) \($0.rank) \($0.body ?? "nil")"
            }
        }
    }

    /// ``notes`` as ``readV1Notes(_:version:)`` prints them.
    static let v1Lines = ["Dune 3 sand", "Solaris 1 nil", "Ubik 2 spray"]

    /// Opens the main store with `schema`, then `body`, then closes it.
    static func with<T>(
        _ kit: ConformanceHarness, _ schema: Schema, plan: (any MigrationPlan.Type)? = nil,
        _ body: (PersistentContainer) async throws -> T
    ) async throws -> T {
        let container = try PersistentContainer(schema: schema, migrationPlan: plan, engine: kit.configuration)
        defer { container.close() }
        return try await body(container)
    }

    /// Expects `body` to throw a `.constraintViolation` naming `entity` and `attributes`.
    @discardableResult
    static func expectClash(
        _ kit: ConformanceHarness, _ entity: String, _ attributes: [String], _ what: String,
        file: String = #fileID, line: Int = #line, _ body: () async throws -> Void
    ) async throws -> StrataError {
        let error = try await kit.expectStrataError(what, file: file, line: line, body)
        try kit.expectEqual(
            error.withoutNative, .constraintViolation(entity: entity, attributes: attributes), what, file: file,
            line: line)
        return error
    }
}

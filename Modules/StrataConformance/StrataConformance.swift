import Foundation
import Strata

/// The engine conformance kit: the executable form of the ``StorageEngine`` contract.
///
/// Every check runs the Strata core on real stores of the engine under test and asserts what
/// users rely on: CRUD of every attribute type and edge value, relationships and delete
/// rules, fetch semantics, uniqueness and indexes, atomicity, snapshot isolation, optimistic
/// conflicts, IDs and URIs, persistence, concurrency, typed errors for bad store files, and
/// schema migrations (inferred changes, staged plans, refusals, drift, newer stores), and
/// persistent history and observation (including delivery of another process's commits, for
/// which the kit starts a ``ConformancePeer``).
///
/// Run it in one line from any test target:
///
/// ```swift
/// let report = await StrataConformance.run(engine: { .lmdb(at: $0.appendingPathComponent("store")) })
/// precondition(report.failures.isEmpty, report.description)
/// ```
///
/// or one test per check with Swift Testing:
///
/// ```swift
/// @Test(arguments: StrataConformance.checks)
/// func conformance(_ check: ConformanceCheck) async throws {
///     try await check.run(engine: { .myEngine(at: $0) })
/// }
/// ```
public enum StrataConformance {
    /// Every check, grouped, in a stable order.
    public static let checks: [ConformanceCheck] =
        EngineCommitChecks.all
        + CRUDChecks.all + RelationshipChecks.all + FetchChecks.all + StreamingChecks.all + AggregateEngineChecks.all
        + ValueStorageChecks.all
        + UniquenessChecks.all + AtomicityChecks.all
        + IsolationChecks.all + ConflictChecks.all + IdentityChecks.all + PersistenceChecks.all + ConcurrencyChecks.all
        + StoreFileChecks.all + ContextChecks.all + SaveValidationChecks.all + FetchWindowChecks.all
        + SchemaMembershipChecks.all
        + RelationshipKeyChecks.all + NilLinkChecks.all + PredicateArithmeticChecks.all
        + WriteSkewChecks.all + PredicateGuardChecks.all + MembershipChecks.all + AttributeTypeChecks.all
        + MigrationChecks.all
        + HistoryChecks.all + PrefetchChecks.all
        + BatchWriteChecks.all + BatchArithmeticChecks.all + BatchPathChecks.all + BatchHistoryChecks.all
        + UpsertChecks.all
        + AggregateQueryChecks.all + ProjectionChecks.all + SetWriteChecks.all

    /// Runs every check against an engine, one after another.
    /// - Parameters:
    ///   - engine: makes the engine's configuration for a store inside a temporary directory.
    ///   - capabilities: what the engine offers beyond the contract (``EngineCapabilities``);
    ///     `.durable` by default.
    ///   - peer: the executable the cross-process checks start (see ``ConformancePeer``); without
    ///     one they fail, unless the engine is not shared across processes.
    /// - Returns: the failures, empty when the engine conforms.
    public static func run(
        engine: @escaping EngineFactory, capabilities: EngineCapabilities = .durable, peer: ConformancePeer? = nil
    ) async -> ConformanceReport {
        var failures: [ConformanceFailure] = []
        for check in checks {
            do {
                try await check.run(engine: engine, capabilities: capabilities, peer: peer)
            } catch let failure as ConformanceFailure {
                failures.append(failure)
            } catch {
                failures.append(
                    ConformanceFailure(check: check.description, message: "\(error)", file: #fileID, line: #line))
            }
        }
        return ConformanceReport(checkCount: checks.count, failures: failures)
    }
}

/// The outcome of ``StrataConformance/run(engine:)``.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// How many checks ran.
    public let checkCount: Int
    /// The checks that failed, with what did not hold.
    public let failures: [ConformanceFailure]

    /// Whether every check passed.
    public var conforms: Bool { failures.isEmpty }

    public var description: String {
        if failures.isEmpty { return "\(checkCount) passed, 0 failed" }
        return (failures.map(\.description) + ["\(checkCount - failures.count) passed, \(failures.count) failed"])
            .joined(separator: "\n")
    }
}

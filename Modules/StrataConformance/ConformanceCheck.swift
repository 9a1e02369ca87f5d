public import Foundation
public import Strata

/// Makes the engine under test for a store location inside a fresh temporary directory.
///
/// ```swift
/// let factory: EngineFactory = { directory in .sqlite(at: directory.appendingPathComponent("store.sqlite")) }
/// ```
public typealias EngineFactory = @Sendable (_ directory: URL) -> EngineConfiguration

/// One behaviour every engine must show, runnable on its own.
///
/// Each check works on real stores in its own temporary directory (removed afterwards) and
/// throws ``ConformanceFailure`` describing the first thing that did not hold.
///
/// ```swift
/// for check in StrataConformance.checks {
///     try await check.run(engine: { .lmdb(at: $0.appendingPathComponent("store")) })
/// }
/// ```
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// The group, e.g. `"CRUD"` or `"Optimistic conflicts"`.
    public let group: String
    /// What the check shows, as a sentence.
    public let name: String
    let body: @Sendable (ConformanceHarness) async throws -> Void

    init(_ group: String, _ name: String, _ body: @escaping @Sendable (ConformanceHarness) async throws -> Void) {
        self.group = group
        self.name = name
        self.body = body
    }

    public var description: String { "\(group): \(name)" }

    /// Runs the check against an engine.
    /// - Parameters:
    ///   - engine: makes the engine's configuration for a store inside a temporary directory.
    ///   - capabilities: what the engine offers beyond the contract (durability, store files,
    ///     other processes); see ``EngineCapabilities``. `.durable` by default.
    ///   - peer: the executable the cross-process checks start (see ``ConformancePeer``); those
    ///     checks fail without one, unless the engine is not shared across processes.
    /// - Throws: ``ConformanceFailure`` when the engine does not behave as required (other
    ///   errors thrown by the engine are wrapped in one too).
    public func run(
        engine: @escaping EngineFactory, capabilities: EngineCapabilities = .durable, peer: ConformancePeer? = nil
    ) async throws {
        let harness = try ConformanceHarness(engine: engine, capabilities: capabilities, peer: peer, check: description)
        defer { harness.finish() }
        do {
            try await body(harness)
        } catch let failure as ConformanceFailure {
            throw failure
        } catch {
            throw ConformanceFailure(
                check: description, message: "unexpected error: \(error)", file: #fileID, line: #line)
        }
    }
}

/// A conformance check that did not hold.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// The check's ``ConformanceCheck/description``.
    public let check: String
    /// What did not hold.
    public let message: String
    /// Where in the kit the failed expectation is.
    public let file: String
    /// The line in ``file``.
    public let line: Int

    public var description: String { "[\(check)] \(message) (\(file):\(line))" }
}

public import Foundation
public import Strata

/// What a check works with: a temporary directory, the engine under test, and expectations
/// that throw ``ConformanceFailure``.
public final class ConformanceHarness: Sendable {
    /// The temporary directory the check's stores live in.
    public let directory: URL
    let engine: EngineFactory
    let check: String
    /// The second process for cross-process checks, when the caller gave one.
    let peer: ConformancePeer?
    /// What the engine offers beyond the contract.
    let capabilities: EngineCapabilities
    /// For an engine that is not durable: one engine per store location, opened after the first
    /// open there and held until the check ends, so that the check's close-and-reopen finds the
    /// store (shared by name) instead of a new one.
    private let keeper = StoreKeeper()

    init(
        engine: @escaping EngineFactory, capabilities: EngineCapabilities = .durable, peer: ConformancePeer? = nil,
        check: String
    ) throws {
        self.engine = engine
        self.capabilities = capabilities
        self.peer = peer
        self.check = check
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Ends the check: closes the engines kept open and removes the temporary directory.
    func finish() {
        releaseKeepers()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Closes the engines the harness keeps open for an engine that is not durable: from now on
    /// a store lives only as long as the check's own containers.
    func releaseKeepers() {
        keeper.release()
    }

    /// The engine configuration for the check's main store.
    public var configuration: EngineConfiguration { keepingOpen(engine(directory)) }

    /// The engine configuration for a second, separate store.
    public func otherConfiguration(_ name: String) throws -> EngineConfiguration {
        let other = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        return keepingOpen(engine(other))
    }

    /// `configuration`, unchanged for a durable engine; for one that is not, its first successful
    /// open of a location also opens a second engine there with the same schema, which the
    /// harness holds until ``releaseKeepers()``.
    private func keepingOpen(_ configuration: EngineConfiguration) -> EngineConfiguration {
        capabilities.isDurable ? configuration : keeper.keepingOpen(configuration)
    }

    /// Opens (or reopens) the main store with a schema (the kit's own by default).
    public func open(schema: Schema? = nil) throws -> PersistentContainer {
        try PersistentContainer(schema: schema ?? KitModels.schema, engine: configuration)
    }

    // MARK: Expectations

    func fail(_ message: String, file: String = #fileID, line: Int = #line) -> ConformanceFailure {
        ConformanceFailure(check: check, message: message, file: file, line: line)
    }

    func expect(
        _ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws {
        if !condition { throw fail(message(), file: file, line: line) }
    }

    /// The first of `elements`: a failure naming `what` when there is none, never a trap, so a
    /// check of an engine that returns too few rows reports it and the other checks still run.
    func first<Element>(
        _ elements: [Element], _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws -> Element {
        guard let first = elements.first else {
            throw fail("\(what()): expected at least one, got none", file: file, line: line)
        }
        return first
    }

    func expectEqual<T: Equatable>(
        _ actual: T, _ expected: T, _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws {
        if actual != expected { throw fail("\(what()): expected \(expected), got \(actual)", file: file, line: line) }
    }

    /// Runs each call in turn and returns, per call, the `StrataError` it threw or nil when it
    /// returned; any other error ends the run and is thrown.
    static func strataErrors(of calls: [() throws -> Void]) throws -> [StrataError?] {
        try calls.map { call in
            do {
                try call()
                return nil
            } catch let error as StrataError {
                return error
            }
        }
    }

    /// Runs `body` and returns the `StrataError` it throws; fails if it throws nothing or another error.
    @discardableResult
    func expectStrataError(
        _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line, _ body: () async throws -> Void
    ) async throws -> StrataError {
        do {
            try await body()
        } catch let error as StrataError {
            return error
        } catch {
            throw fail("\(what()): expected a StrataError, got \(type(of: error)): \(error)", file: file, line: line)
        }
        throw fail("\(what()): expected a StrataError, but nothing was thrown", file: file, line: line)
    }

    /// Synchronous form of ``expectStrataError(_:file:line:_:)``.
    @discardableResult
    func expectStrataError(
        _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line, sync body: () throws -> Void
    ) throws -> StrataError {
        do {
            try body()
        } catch let error as StrataError {
            return error
        } catch {
            throw fail("\(what()): expected a StrataError, got \(type(of: error)): \(error)", file: file, line: line)
        }
        throw fail("\(what()): expected a StrataError, but nothing was thrown", file: file, line: line)
    }
}

import Foundation
import StrataLMDB
import StrataPostgres
import StrataSQLite
import StrataStorage

/// A store named on the command line: `sqlite:PATH`, `lmdb:PATH` or a PostgreSQL URL
/// (`postgres://…` or `postgresql://…`, or libpq's settings after `postgres:`) whose `schema`
/// parameter names the store's schema.
enum StoreArgument {
    /// Where a store argument points, by engine.
    enum Location: Equatable {
        case sqlite(URL)
        case lmdb(URL)
        case postgres(url: String, schema: String)
    }

    /// The location `argument` names.
    /// - Throws: ``ToolError/unknownScheme(_:)``, ``ToolError/inMemoryStore(_:)``, or
    ///   ``ToolError/usage(_:)`` for an empty path or a PostgreSQL URL without a schema.
    static func location(for argument: String) throws(ToolError) -> Location {
        if let path = argument.dropPrefix("sqlite:") { return .sqlite(try fileURL(path, argument)) }
        if let path = argument.dropPrefix("lmdb:") { return .lmdb(try fileURL(path, argument)) }
        if argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") {
            let (url, schema) = try splitSchema(argument)
            return .postgres(url: url, schema: schema)
        }
        if argument.hasPrefix("memory:") { throw .inMemoryStore(argument) }
        throw .unknownScheme(argument)
    }

    /// The engine's read-only access to the store `argument` names.
    /// - Throws: the errors of ``location(for:)``.
    static func inspection(for argument: String) throws(ToolError) -> StoreInspection {
        switch try location(for: argument) {
        case .sqlite(let url): EngineConfiguration.sqliteInspection(at: url)
        case .lmdb(let url): EngineConfiguration.lmdbInspection(at: url)
        case .postgres(let url, let schema): EngineConfiguration.postgresInspection(url: url, schema: schema)
        }
    }

    /// The engine's copy and backup access to the store `argument` names.
    /// - Throws: the errors of ``location(for:)``.
    static func maintenance(for argument: String) throws(ToolError) -> StoreMaintenance {
        switch try location(for: argument) {
        case .sqlite(let url): EngineConfiguration.sqliteMaintenance(at: url)
        case .lmdb(let url): EngineConfiguration.lmdbMaintenance(at: url)
        case .postgres(let url, let schema): EngineConfiguration.postgresMaintenance(url: url, schema: schema)
        }
    }

    /// The configuration that creates the store `argument` names (a copy's target), as an
    /// application's first open does: a SQLite file, an LMDB directory, a PostgreSQL schema.
    /// - Throws: the errors of ``location(for:)``.
    static func creation(for argument: String) throws(ToolError) -> EngineConfiguration {
        switch try location(for: argument) {
        case .sqlite(let url): .sqlite(at: url)
        case .lmdb(let url): .lmdb(at: url)
        case .postgres(let url, let schema): .postgres(url: url, schema: schema)
        }
    }

    /// Removes the files of a store this command has just created and nothing else has used (a
    /// copy's target that could not be marked unfinished). Returns whether it did: false for a
    /// PostgreSQL store, whose tables stay.
    static func removeNewStore(for argument: String) -> Bool {
        guard let location = try? location(for: argument) else { return false }
        let files: [URL]
        switch location {
        case .sqlite(let url): files = ["", "-wal", "-shm", "-journal"].map { URL(fileURLWithPath: url.path + $0) }
        case .lmdb(let url): files = ["data.mdb", "lock.mdb"].map { url.appendingPathComponent($0) }
        case .postgres: return false
        }
        for file in files where FileManager.default.fileExists(atPath: file.path) {
            do { try FileManager.default.removeItem(at: file) } catch { return false }
        }
        return true
    }

    private static func fileURL(_ path: Substring, _ argument: String) throws(ToolError) -> URL {
        guard !path.isEmpty else { throw .usage("\(String(reflecting: argument)) names no path") }
        return URL(fileURLWithPath: String(path))
    }

    /// The URL without its `schema` parameter, and the schema.
    static func splitSchema(_ argument: String) throws(ToolError) -> (url: String, schema: String) {
        guard let question = argument.firstIndex(of: "?") else {
            throw .usage("\(redacted(argument)) names no schema: add ?schema=NAME, the store's schema")
        }
        var schema: String?
        var kept: [Substring] = []
        for parameter in argument[argument.index(after: question)...].split(separator: "&") {
            if let value = parameter.dropPrefix("schema=") {
                schema = String(value).removingPercentEncoding ?? String(value)
            } else {
                kept.append(parameter)
            }
        }
        guard let schema, !schema.isEmpty else {
            throw .usage("\(redacted(argument)) names no schema: add schema=NAME, the store's schema")
        }
        let base = String(argument[..<question])
        return (kept.isEmpty ? base : base + "?" + kept.joined(separator: "&"), schema)
    }

    /// `argument` with any password between `:` and `@` hidden, for messages.
    static func redacted(_ argument: String) -> String {
        argument.replacing(/:\/\/([^:@\/]*):[^@\/]*@/) { "://\($0.output.1):***@" }
    }
}

extension StringProtocol {
    /// The rest after `prefix`, or nil when the text does not start with it.
    func dropPrefix(_ prefix: String) -> SubSequence? {
        hasPrefix(prefix) ? dropFirst(prefix.count) : nil
    }
}

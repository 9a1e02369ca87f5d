import Foundation
import StrataStorage

/// Why a `strata` command stopped: each case one line on standard error and its own exit status
/// (``exitStatus``), which `Docs/StrataTool.md` lists.
package enum ToolError: Error, Sendable, Equatable {
    /// The command line is wrong: an unknown command or option, a missing or extra argument.
    case usage(String)
    /// The store argument names no engine the tool knows (`sqlite:`, `lmdb:`, `postgres://`).
    case unknownScheme(String)
    /// A `memory:` store: it lives inside one process, so no other process can open it.
    case inMemoryStore(String)
    /// Nothing is at the store's location (the tool never creates a store).
    case missingStore(String)
    /// The PostgreSQL database a store's URL names does not exist (the tool creates schemas, never
    /// databases).
    case missingDatabase(String)
    /// The PostgreSQL server refused the login (user or password).
    case loginRefused(String)
    /// Something is at the location, but not a store Strata wrote (another program's file or schema).
    case notAStrataStore(String)
    /// The store's recorded schema is missing or does not describe a store the tool can open.
    case schemaUnreadable(String)
    /// The store cannot be reached or written: an I/O or permission failure, a lock held too long,
    /// no room left. Not damage: the store may be sound.
    case storeUnreachable(String)
    /// Any other failure of the store or the engine (damage found at open, an engine's own error).
    case storeFailed(String)
    /// A backup's destination or a copy's target is already there (a file, a directory, a store).
    case destinationTaken(String)
    /// A backup's destination is an existing (empty) directory: a backup makes its own file or directory.
    case destinationIsDirectory(String)
    /// A copy's target is a copy that did not finish (the process was killed or failed).
    case unfinishedCopy(String)
    /// A finished copy's target does not hold what the source held: counts, checksums or keys differ.
    case copyMismatch(String)

    /// The process's exit status for this error; 0 is success and 1 a store `verify` found unsound.
    package var exitStatus: Int32 {
        switch self {
        case .usage: 2
        case .unknownScheme: 3
        case .missingStore, .missingDatabase: 4
        case .loginRefused: 5
        case .notAStrataStore: 6
        case .inMemoryStore: 7
        case .schemaUnreadable: 8
        case .storeUnreachable, .storeFailed: 9
        case .destinationTaken, .destinationIsDirectory: 10
        case .unfinishedCopy: 11
        case .copyMismatch: 12
        }
    }

    /// The one line printed on standard error.
    package var message: String {
        switch self {
        case .usage(let text): "strata: \(text) (see `strata --help`)"
        case .unknownScheme(let argument):
            """
            strata: \(String(reflecting: argument)) names no engine: write sqlite:PATH, lmdb:PATH or \
            postgres://…?schema=NAME
            """
        case .inMemoryStore(let argument):
            """
            strata: \(String(reflecting: argument)) is an in-memory store, which lives inside the process that made \
            it; no other process can open it
            """
        case .missingStore(let location):
            "strata: no store at \(location): check the path or URL (the tool never creates a store)"
        case .missingDatabase(let location):
            """
            strata: the database \(location) names does not exist: check the URL, or create the database \
            (createdb NAME); the tool makes a copy's schema, never a database
            """
        case .loginRefused(let text): "strata: \(Self.oneLine(text))"
        case .notAStrataStore(let text): "strata: not a Strata store: \(Self.oneLine(text))"
        case .schemaUnreadable(let text): "strata: the store's recorded schema cannot be used: \(Self.oneLine(text))"
        case .storeUnreachable(let text), .storeFailed(let text): "strata: \(Self.oneLine(text))"
        case .destinationTaken(let location):
            "strata: \(location) is not empty: a copy or a backup writes only to a new store; choose another target"
        case .destinationIsDirectory(let location):
            """
            strata: \(location) is a directory: a backup makes its own file or directory at a path where nothing \
            is; name a new path, such as \(location.hasSuffix("/") ? location : location + "/")NAME
            """
        case .unfinishedCopy(let location):
            """
            strata: \(location) holds a copy that did not finish (interrupted or failed): remove it (the file, \
            the directory, or DROP SCHEMA … CASCADE) and copy again
            """
        case .copyMismatch(let text): "strata: the copy does not match its source: \(Self.oneLine(text))"
        }
    }

    /// The tool's error for an engine's error at `location`.
    static func from(_ error: any Error) -> ToolError {
        if let error = error as? ToolError { return error }
        guard let error = error as? StrataError else { return .storeFailed(String(describing: error)) }
        switch error {
        case .notAStore(let location, let reason, _):
            // A missing PostgreSQL database is a store that is not there, as a missing file is.
            if reason == StrataError.missingDatabaseReason { return .missingDatabase(location) }
            return .notAStrataStore(error.description)
        case .io(let text, let native):
            let loginCodes: Set = ["28000", "28P01"]
            if text.contains("refused the login") || native?.sqlState.map(loginCodes.contains) == true {
                return .loginRefused(error.description)
            }
            return .storeUnreachable(error.description)
        case .busy, .storeFull: return .storeUnreachable(error.description)
        default: return .storeFailed(error.description)
        }
    }

    /// `text` on one line: its lines joined with "; ".
    /// At most 2,000 characters: a conflict listing thousands of rows stays readable.
    static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: "; ")
        guard line.count > 2000 else { return line }
        return line.prefix(2000) + "… (\(line.count - 2000) more characters)"
    }
}

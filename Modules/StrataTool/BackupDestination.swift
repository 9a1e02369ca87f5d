import Foundation
import StrataStorage

/// The path `strata backup` writes to, from its `DEST` argument: a plain path, or one named as a
/// store of the engine the backup is (`sqlite:PATH`, `lmdb:PATH`), as `copy` names its target.
/// Checked before anything is read, so that a bad `DEST` is blamed, not the source.
enum BackupDestination {
    /// The path `argument` names for a backup that is a store of `engine` (`sqlite` or `lmdb`).
    /// - Throws: ``ToolError/usage(_:)`` for a store argument of another engine;
    ///   ``ToolError/destinationTaken(_:)`` when something is at the path;
    ///   ``ToolError/storeUnreachable(_:)`` when its directory is missing or cannot be written.
    static func path(_ argument: String, engine: String) throws(ToolError) -> String {
        guard !argument.isEmpty else { throw .usage("backup needs a DEST path") }
        let url = try fileURL(argument, engine: engine)
        let path = url.path(percentEncoded: false)
        // A symbolic link is taken even when it dangles (`isDirectory` follows links).
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil { throw .destinationTaken(path) }
        switch SystemCalls.isDirectory(atPath: path) {
        case nil: break
        case true?:
            let empty = (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty == true
            throw empty ? .destinationIsDirectory(path) : .destinationTaken(path)
        case false?: throw .destinationTaken(path)
        }
        // Nothing is there. For a SQLite backup (one file), a path that ends with "/" names a
        // directory to write into, which does not exist: the backup's own name is missing. (An
        // LMDB backup is a directory: `new/` names it.)
        if engine == "sqlite" && argument.hasSuffix("/") {
            throw .storeUnreachable(
                """
                \(path) cannot be created: it ends with "/", so it names a directory to put the backup in, and \
                that directory does not exist; name the backup itself without the trailing "/" (such as \
                \(path.hasSuffix("/") ? String(path.dropLast()) : path)), in a directory that exists
                """)
        }
        let directory = url.deletingLastPathComponent().path(percentEncoded: false)
        guard SystemCalls.isDirectory(atPath: directory) == true, FileManager.default.isWritableFile(atPath: directory)
        else {
            throw .storeUnreachable(
                """
                \(path) cannot be created: its directory \(directory) does not exist or cannot be written; check \
                that the directory exists and is writable
                """)
        }
        return path
    }

    /// The file URL of a plain path, or of a store argument naming a store of `engine`.
    private static func fileURL(_ argument: String, engine: String) throws(ToolError) -> URL {
        let schemes = ["sqlite:", "lmdb:", "postgres:", "postgresql:", "memory:"]
        guard schemes.contains(where: argument.hasPrefix) else { return URL(fileURLWithPath: argument) }
        let named = argument.hasPrefix("sqlite:") || argument.hasPrefix("lmdb:")
        switch named ? try StoreArgument.location(for: argument) : nil {
        case .sqlite(let url)? where engine == "sqlite": return url
        case .lmdb(let url)? where engine == "lmdb": return url
        default:
            throw .usage(
                """
                a backup of this store is a\(engine == "lmdb" ? "n LMDB directory" : " SQLite file"): name DEST as \
                a path or \(engine):PATH, not \(StoreArgument.redacted(argument)) (`strata copy` copies into another \
                engine)
                """)
        }
    }
}

import Foundation
import StrataStorage

/// The path `strata backup` writes to, from its `DEST` argument, checked before anything is read,
/// so that a bad `DEST` is blamed, not the source.
enum BackupDestination {
    /// The path `argument` names for a backup that is a store of `engine` (`sqlite` or `lmdb`).
    /// - Throws: ``ToolError/destinationTaken(_:)`` when something is at the path;
    ///   ``ToolError/storeUnreachable(_:)`` when its directory is missing or cannot be written.
    static func path(_ argument: String, engine: String) throws(ToolError) -> String {
        guard !argument.isEmpty else { throw .usage("backup needs a DEST path") }
        let url = URL(fileURLWithPath: argument)
        let path = url.path(percentEncoded: false)
        guard SystemCalls.isDirectory(atPath: path) == nil else { throw .destinationTaken(path) }
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
}

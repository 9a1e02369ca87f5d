import Foundation
import StrataStorage

/// Runs `strata backup STORE DEST`: an online, consistent copy that opens as a store. SQLite
/// writes it with `VACUUM INTO`, LMDB with `mdb_env_copy2` and `MDB_CP_COMPACT` (both keep the
/// history); a PostgreSQL store is copied into a new SQLite store at DEST (``StoreCopier``).
enum StoreBackup {
    /// What a backup wrote.
    struct Outcome: Codable, Sendable, Equatable {
        var source: String
        var destination: String
        /// `sqlite` or `lmdb`: how to name the backup as a store (`sqlite:DEST`).
        var destinationEngine: String
        /// For a PostgreSQL source, the copy's outcome; nil for a file copy.
        var copy: CopyOutcome?

        var text: String {
            let line = "backed up \(source) to \(destinationEngine):\(destination)"
            return copy.map { line + " (a copy into SQLite)\n" + $0.text } ?? line
        }
    }

    /// Backs up the store `store` names into `destination`, a path where nothing is.
    /// - Throws: the errors of ``BackupDestination/path(_:engine:)`` for a bad `destination`, and
    ///   the errors of reading the store.
    static func backup(
        _ store: String, to destination: String, batchRows: Int = 2000, progress: ((String) -> Void)?
    ) throws(ToolError) -> Outcome {
        let inspection = try StoreArgument.inspection(for: store)
        try OpenedStore.requireSoundStructure(inspection, "backed up")
        let backup = try StoreArgument.maintenance(for: store).backup
        let path = try BackupDestination.path(destination, engine: backup == nil ? "sqlite" : inspection.engineName)
        let url = URL(fileURLWithPath: path)
        guard let copy = backup else {
            var copier = StoreCopier(source: store, target: "sqlite:" + path)
            copier.progress = progress
            copier.batchRows = batchRows
            let outcome = try copier.run()
            return Outcome(source: inspection.location, destination: path, destinationEngine: "sqlite", copy: outcome)
        }
        _ = try OpenedStore.readRecord(inspection)
        let written = try StoreArgument.inspection(for: inspection.engineName + ":" + path)
        do {
            try copy(url)
        } catch {
            throw ToolError.from(error)
        }
        do {
            // The backup is a store of its own: its record reads, with the source's identifier.
            guard try written.readRecord()?.identifier == OpenedStore.readRecord(inspection).identifier else {
                throw ToolError.storeFailed("the backup at \(path) does not carry the store's identifier")
            }
        } catch {
            // A backup that does not read back (on a full disk, LMDB finds no room for its lock
            // file) is removed: nothing at DEST may pass for a backup that was never checked.
            try? FileManager.default.removeItem(at: url)
            throw ToolError.from(error)
        }
        return Outcome(
            source: inspection.location, destination: path, destinationEngine: inspection.engineName, copy: nil)
    }
}

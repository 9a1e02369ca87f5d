import CLMDB
import Foundation
import StrataStorage

/// Whether the store's `data.mdb` is still the file this environment has open.
///
/// A process that deletes the store directory, or moves another `data.mdb` over this one, while
/// this environment is open leaves it writing into a file that no path names any more: every
/// commit would be acknowledged and then lost, while a new process opening the path sees another
/// store (or creates an empty one). So each write transaction first compares the open file with
/// the one at the path (one `fstat` and one `stat`, about a microsecond).
///
/// Walled file (strict memory safety): the `MDB_env` pointer's file descriptor stays in here.
extension LMDBEnvironment {
    /// Throws `.notAStore` when `data.mdb` at the store's path is missing or is another file
    /// than the one this environment opened. Writer thread, before a write transaction begins.
    func checkDataFileInPlace(_ context: String) throws(StrataError) {
        var descriptor: mdb_filehandle_t = -1
        guard unsafe mdb_env_get_fd(raw, &descriptor) == 0 else { return }
        var open = stat()
        guard unsafe fstat(descriptor, &open) == 0 else { return }
        var named = stat()
        let dataFile = path + "/data.mdb"
        if unsafe stat(dataFile, &named) == 0 {
            if named.st_ino == open.st_ino && named.st_dev == open.st_dev { return }
        } else if errno != ENOENT && errno != ENOTDIR {
            // Cannot tell (a permission on the path changed): the write goes on as before.
            return
        }
        throw .notAStore(
            path: path,
            reason: """
                \(context): it is no longer the store this container opened: \(dataFile) was deleted or \
                replaced by another file since, so a commit would go to a file no path names and be lost. \
                Nothing was written. Open the store again with a new container (restore the directory \
                from a backup if it was deleted by mistake)
                """)
    }
}

import Foundation
import StrataStorage

/// What a store's files were before an open, so that a failed creation can be undone.
///
/// Creating an LMDB store is several steps (the directory, `lock.mdb`, `data.mdb` and its meta
/// pages, the opening transaction with Strata's databases), and a full disk can stop any of
/// them. Left behind, a `data.mdb` stub of 0 or 4,096 bytes makes every later open fail
/// (`.notAStore` "empty", or `.storeCorrupt` "truncated"), even after space is freed. So
/// ``LMDBEngine/open(directory:options:schema:)`` records what existed (under the open lock)
/// and, when the open fails on a store it was creating, removes what the attempt made.
/// A store whose `data.mdb` existed before is never touched.
struct LMDBStoreCreation {
    let directory: String
    /// This call created the store directory.
    let createdDirectory: Bool
    /// `data.mdb` existed: the open is of an existing store (or of a damaged one), not a creation.
    let dataFileExisted: Bool
    /// The files that existed before, by name, among those an open makes.
    private let existed: Set<String>

    /// The files an open creates, besides `data.mdb` and the open lock's file (which exists by
    /// the time this is recorded, and goes only with a directory this open made).
    private static let madeByOpen = ["lock.mdb", LMDBFileLock.writeLockName]

    /// Records the files of `directory` now (call it under the open lock).
    /// - Parameter createdDirectory: whether this open created the directory.
    init(directory: URL, createdDirectory: Bool) {
        self.directory = directory.path
        self.createdDirectory = createdDirectory
        let path = self.directory
        dataFileExisted = SystemCalls.fileKind(atPath: path + "/data.mdb", followingLinks: false) != nil
        existed = Set(
            Self.madeByOpen.filter { SystemCalls.fileKind(atPath: path + "/" + $0, followingLinks: false) != nil })
    }

    /// After a failed open (its environment closed): when it was creating the store, removes
    /// `data.mdb` and the other files it made, and the directory if it made that and it is now
    /// empty. Does nothing for a store that existed.
    ///
    /// The open lock's file (held by the caller until it returns) is removed only with the
    /// directory: a process waiting for the lock then finds no directory and reports that,
    /// rather than two processes each locking a file of their own.
    func undo() {
        guard !dataFileExisted else { return }
        SystemCalls.unlink(directory + "/data.mdb")
        for name in Self.madeByOpen where !existed.contains(name) {
            SystemCalls.unlink(directory + "/" + name)
        }
        if createdDirectory {
            SystemCalls.unlink(directory + "/" + LMDBFileLock.openLockName)
            SystemCalls.removeEmptyDirectory(directory)
        }
    }
}

import CLMDB
import StrataStorage

/// The environment's compacting copy, for `strata backup`.
///
/// Walled file (strict memory safety): `mdb_env_copy2` takes the `MDB_env` pointer, which stays in
/// here; the call reads in a read transaction of its own, so it copies one consistent state while
/// other processes write.
extension LMDBEnvironment {
    /// Copies the environment, compacted (`MDB_CP_COMPACT`: free pages left out, pages renumbered),
    /// into the existing empty directory `directory`, as one read operation (map growth waits).
    /// - Throws: `.io`, `.storeFull` and the other errors of LMDB's result code.
    func copyCompacted(into directory: String) throws(StrataError) {
        let rc = withReadOperation { unsafe mdb_env_copy2(raw, directory, UInt32(MDB_CP_COMPACT)) }
        if let error = Self.fail(rc, directory) { throw error }
    }
}

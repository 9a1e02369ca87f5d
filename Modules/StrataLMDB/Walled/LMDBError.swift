import CLMDB
import Foundation
import StrataStorage

/// One LMDB result code (or errno), before it is classified as a `StrataError`.
///
/// This is the only place that maps LMDB codes: ``strataError(_:)`` turns each into the
/// engine-neutral error callers see.
enum LMDBError: Error, Equatable, CustomStringConvertible {
    case keyExists, notFound, pageNotFound, corrupted, panic, versionMismatch, invalid
    case mapFull, dbsFull, readersFull, txnFull, cursorFull, pageFull, mapResized
    case incompatible, badReaderSlot, badTransaction, badValueSize, badDatabase
    /// errno values that share a class keep the exact errno (`ENOSPC`, `EDQUOT` or `EFBIG`; ...).
    case noSpace(Int32)
    case accessDenied(Int32)
    case readOnlyFileSystem, noMemory, invalidArgument, ioFailure
    case busy(Int32)
    case other(Int32)

    init(code: Int32) {
        switch code {
        case MDB_KEYEXIST: self = .keyExists
        case MDB_NOTFOUND: self = .notFound
        case MDB_PAGE_NOTFOUND: self = .pageNotFound
        case MDB_CORRUPTED: self = .corrupted
        case MDB_PANIC: self = .panic
        case MDB_VERSION_MISMATCH: self = .versionMismatch
        case MDB_INVALID: self = .invalid
        case MDB_MAP_FULL: self = .mapFull
        case MDB_DBS_FULL: self = .dbsFull
        case MDB_READERS_FULL: self = .readersFull
        case MDB_TXN_FULL: self = .txnFull
        case MDB_CURSOR_FULL: self = .cursorFull
        case MDB_PAGE_FULL: self = .pageFull
        case MDB_MAP_RESIZED: self = .mapResized
        case MDB_INCOMPATIBLE: self = .incompatible
        case MDB_BAD_RSLOT: self = .badReaderSlot
        case MDB_BAD_TXN: self = .badTransaction
        case MDB_BAD_VALSIZE: self = .badValueSize
        case MDB_BAD_DBI: self = .badDatabase
        case ENOSPC, EDQUOT, EFBIG: self = .noSpace(code)
        case EACCES, EPERM: self = .accessDenied(code)
        case EROFS: self = .readOnlyFileSystem
        case ENOMEM: self = .noMemory
        case EINVAL: self = .invalidArgument
        case EIO: self = .ioFailure
        case EBUSY, EAGAIN: self = .busy(code)
        default: self = .other(code)
        }
    }

    var code: Int32 {
        switch self {
        case .keyExists: MDB_KEYEXIST
        case .notFound: MDB_NOTFOUND
        case .pageNotFound: MDB_PAGE_NOTFOUND
        case .corrupted: MDB_CORRUPTED
        case .panic: MDB_PANIC
        case .versionMismatch: MDB_VERSION_MISMATCH
        case .invalid: MDB_INVALID
        case .mapFull: MDB_MAP_FULL
        case .dbsFull: MDB_DBS_FULL
        case .readersFull: MDB_READERS_FULL
        case .txnFull: MDB_TXN_FULL
        case .cursorFull: MDB_CURSOR_FULL
        case .pageFull: MDB_PAGE_FULL
        case .mapResized: MDB_MAP_RESIZED
        case .incompatible: MDB_INCOMPATIBLE
        case .badReaderSlot: MDB_BAD_RSLOT
        case .badTransaction: MDB_BAD_TXN
        case .badValueSize: MDB_BAD_VALSIZE
        case .badDatabase: MDB_BAD_DBI
        case .noSpace(let code): code
        case .accessDenied(let code): code
        case .readOnlyFileSystem: EROFS
        case .noMemory: ENOMEM
        case .invalidArgument: EINVAL
        case .ioFailure: EIO
        case .busy(let code): code
        case .other(let code): code
        }
    }

    var description: String { lmdbMessage(code) }

    /// The native error for this code: engine `"lmdb"`, the code, `mdb_strerror`'s message and
    /// the operation (an LMDB call such as `"mdb_put"`, or what the engine was doing).
    func native(_ operation: String) -> NativeError {
        NativeError(engine: "lmdb", code: Int(code), message: description, operation: operation)
    }

    /// Classifies the code as a `StrataError` carrying the native error (see ``native(_:)``).
    ///
    /// The same situations get the same case as on SQLite:
    /// - `.storeFull`: map full past its limit, disk full (`ENOSPC`, `EDQUOT`, `EFBIG`), too many
    ///   dirty pages or databases.
    /// - `.busy`: the reader table is full, or the lock is busy (`EBUSY`, `EAGAIN`).
    /// - `.storeCorrupt`: only codes that mean the file is damaged: `MDB_CORRUPTED` and
    ///   `MDB_PAGE_NOTFOUND`.
    /// - `.notAStore`: not an LMDB file or another LMDB version.
    /// - `.io`: the operating system refused or failed (`EACCES`, `EROFS`, `EIO`, `ENOMEM`).
    /// - `.engineFailure`: every other code (LMDB's internal errors such as `MDB_PANIC`,
    ///   `MDB_PAGE_FULL`, `MDB_BAD_TXN`, and unknown codes): not known to mean damage.
    /// - Parameter context: what was being done, e.g. "committing" or the store path; it becomes
    ///   the native error's operation.
    func strataError(_ context: String) -> StrataError {
        let native = native(context)
        switch self {
        case .mapFull:
            return .storeFull("\(context): the map is full and may not grow further", native: native)
        case .noSpace:
            return .storeFull("\(context): the disk or the file size limit is reached", native: native)
        case .txnFull, .dbsFull:
            return .storeFull(
                "\(context): the transaction or the store has no room for more pages or databases", native: native)
        case .readersFull:
            return .busy("\(context): every reader slot is taken", native: native)
        case .busy:
            return .busy("\(context): another process holds the store's lock", native: native)
        case .corrupted, .pageNotFound:
            return .storeCorrupt("\(context): LMDB found damaged pages", native: native)
        case .invalid, .versionMismatch, .incompatible:
            return .notAStore(path: context, reason: "not an LMDB store of this version", native: native)
        case .accessDenied, .readOnlyFileSystem:
            return .io("\(context): the file or its directory cannot be written", native: native)
        case .ioFailure:
            return .io("\(context): the operating system failed a read or write", native: native)
        case .noMemory:
            return .io("\(context): out of memory", native: native)
        case .panic, .pageFull, .cursorFull, .keyExists, .notFound, .mapResized, .badReaderSlot, .badTransaction,
            .badValueSize, .badDatabase, .invalidArgument, .other:
            return .engineFailure(native)
        }
    }
}

extension LMDBError {
    /// The `StrataError` of `mdb_env_open` failing for the store in `directory`: for a
    /// permission error, the file that could not be opened (`data.mdb`, or `lock.mdb`, which
    /// LMDB opens for writing even to read, and which may belong to another user), named with
    /// its owner; otherwise ``strataError(_:)``.
    func openError(directory: String) -> StrataError {
        switch self {
        case .accessDenied, .readOnlyFileSystem:
            let files = [(directory + "/data.mdb", "data file"), (directory + "/lock.mdb", "lock file")]
            if let detail = StoreFileAccess.firstUnwritable(files) { return .io(detail, native: native(directory)) }
            return strataError(directory)
        default:
            return strataError(directory)
        }
    }
}

/// Throws the `LMDBError` for a non-zero result code.
@inline(__always)
func lmdbCheck(_ rc: Int32) throws(LMDBError) {
    if rc != 0 { throw LMDBError(code: rc) }
}

/// Maps any error met inside the engine to the `StrataError` callers see.
func strataError(_ error: any Error, _ context: String) -> StrataError {
    switch error {
    case let error as StrataError: error
    case let error as LMDBError: error.strataError(context)
    default: .io("\(context): \(error)")
    }
}

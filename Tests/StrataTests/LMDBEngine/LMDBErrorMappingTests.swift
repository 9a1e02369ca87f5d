import CLMDB
import Foundation
import Strata
import Testing

@testable import StrataLMDB

/// Every LMDB result code becomes the `StrataError` its meaning calls for, keeping the native
/// code and message: damage only for damage codes, unknown codes as `.engineFailure`.
@Suite("LMDB error mapping")
struct LMDBErrorMappingTests {
    /// The `StrataError` case name of an error.
    static func caseName(_ error: StrataError) -> String {
        switch error {
        case .storeCorrupt: "storeCorrupt"
        case .storeFull: "storeFull"
        case .busy: "busy"
        case .io: "io"
        case .notAStore: "notAStore"
        case .engineFailure: "engineFailure"
        default: "\(error)"
        }
    }

    static let expected: [(code: Int32, case: String)] = [
        (MDB_CORRUPTED, "storeCorrupt"), (MDB_PAGE_NOTFOUND, "storeCorrupt"),
        (MDB_PANIC, "engineFailure"), (MDB_PAGE_FULL, "engineFailure"), (MDB_CURSOR_FULL, "engineFailure"),
        (MDB_BAD_TXN, "engineFailure"), (MDB_BAD_RSLOT, "engineFailure"), (MDB_BAD_VALSIZE, "engineFailure"),
        (MDB_BAD_DBI, "engineFailure"), (MDB_KEYEXIST, "engineFailure"), (MDB_NOTFOUND, "engineFailure"),
        (MDB_MAP_RESIZED, "engineFailure"), (EINVAL, "engineFailure"), (12_345, "engineFailure"),
        (-30_000, "engineFailure"),
        (MDB_READERS_FULL, "busy"), (EBUSY, "busy"), (EAGAIN, "busy"),
        (MDB_MAP_FULL, "storeFull"), (MDB_TXN_FULL, "storeFull"), (MDB_DBS_FULL, "storeFull"), (ENOSPC, "storeFull"),
        (EDQUOT, "storeFull"),
        (EIO, "io"), (EACCES, "io"), (EROFS, "io"), (ENOMEM, "io"),
        (MDB_INVALID, "notAStore"), (MDB_VERSION_MISMATCH, "notAStore"), (MDB_INCOMPATIBLE, "notAStore"),
    ]

    @Test("each code maps to its class, keeping the native code and message")
    func mapping() {
        for (code, expectedCase) in Self.expected {
            let error = LMDBError(code: code).strataError("committing to /store")
            #expect(Self.caseName(error) == expectedCase, "LMDB code \(code) became \(error)")
            let native = String(cString: mdb_strerror(code))
            #expect(
                error.native
                    == NativeError(engine: "lmdb", code: Int(code), message: native, operation: "committing to /store"),
                "\(error)")
            #expect(error.description.contains("lmdb code \(code) \(String(reflecting: native))"), "\(error)")
        }
    }
}

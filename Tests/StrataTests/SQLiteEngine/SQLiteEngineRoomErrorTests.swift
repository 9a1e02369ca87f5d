import CSQLite
import Foundation
import Strata
import Testing

@testable import StrataSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Only an I/O error of a write can mean that the store ran out of room: with the store file at
/// the process's file-size limit, SQLite's write-side I/O errors become `.storeFull`, while a
/// failed read, lock, `fstat` or `mmap` stays `.io` (it says nothing about room).
@Suite("SQLiteEngine: which I/O errors mean a full store")
struct SQLiteEngineRoomErrorTests {
    /// `SQLITE_IOERR_WRITE`, `_FSYNC`, `_DIR_FSYNC`, `_TRUNCATE`, `_SHMSIZE`, `_COMMIT_ATOMIC`.
    static let writeSide: [Int32] = [3, 4, 5, 6, 19, 30].map { SQLITE_IOERR | ($0 << 8) }
    /// Plain `SQLITE_IOERR`, and `_READ`, `_SHORT_READ`, `_FSTAT`, `_UNLOCK`, `_RDLOCK`,
    /// `_DELETE`, `_ACCESS`, `_CHECKRESERVEDLOCK`, `_LOCK`, `_CLOSE`, `_SHMOPEN`, `_SHMLOCK`,
    /// `_SHMMAP`, `_SEEK`, `_MMAP`, `_DATA`, `_CORRUPTFS`.
    static let otherSide: [Int32] =
        [SQLITE_IOERR]
        + [1, 2, 7, 8, 9, 10, 13, 14, 15, 16, 18, 20, 21, 22, 24, 32, 33].map { SQLITE_IOERR | ($0 << 8) }

    /// The case of a `StrataError`, by name.
    static func caseName(_ error: StrataError) -> String {
        switch error {
        case .storeFull: "storeFull"
        case .io: "io"
        default: "other: \(error)"
        }
    }

    @Test("at the file-size limit only write-side I/O errors become storeFull; reads, locks and the rest stay io")
    func onlyWritesRunOutOfRoom() async throws {
        let store = try TemporarySQLiteStore()
        try store.open().close()
        let path = store.path
        // With room (no file-size limit, a disk with space) every I/O error is `.io`.
        for rc in Self.writeSide + Self.otherSide {
            #expect(
                Self.caseName(strataError(for: SQLiteResultCode(rc), message: "disk I/O error", path: path)) == "io",
                "code \(rc) with room")
        }
        // The file-size limit is per process: the child sets it below the store file's size and
        // reports how each code is classified.
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            [path = path as String] in
            signal(SIGXFSZ, SIG_IGN)
            var limit = rlimit(rlim_cur: 4096, rlim_max: 4096)
            guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { exit(3) }
            var lines: [String] = []
            for rc in SQLiteEngineRoomErrorTests.writeSide + SQLiteEngineRoomErrorTests.otherSide {
                let error = strataError(for: SQLiteResultCode(rc), message: "disk I/O error", path: path)
                lines.append("\(rc) \(SQLiteEngineRoomErrorTests.caseName(error))")
            }
            FileHandle.standardOutput.write(Data(lines.joined(separator: "\n").utf8))
            exit(0)
        }
        let outcomes = String(decoding: result.standardOutputContent, as: UTF8.self).split(separator: "\n").map(
            String.init)
        let expected = Self.writeSide.map { "\($0) storeFull" } + Self.otherSide.map { "\($0) io" }
        #expect(outcomes == expected)
    }
}

import Foundation
import StrataStorage

/// Checks a store directory before LMDB maps it, since LMDB trusts its file: a truncated or
/// foreign `data.mdb` could otherwise crash the process (SIGBUS) instead of failing.
///
/// LMDB 0.9 keeps two meta pages at the start of `data.mdb` (page 0 and page 1). Each is a page
/// header (16 bytes on 64-bit: `mp_pgno`, `mp_pad`, `mp_flags` with `P_META`, `mp_lower/upper`)
/// followed by `MDB_meta`: `mm_magic` (0xBEEFC0DE), `mm_version` (1), `mm_address`, `mm_mapsize`,
/// two `MDB_db` records of 48 bytes (the free list's `md_pad` holds the page size), `mm_last_pg`
/// and `mm_txnid`. The newest valid meta names the last used page; the file must reach it.
enum LMDBFileCheck {
    static let headerSize = 16
    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let metaFlag: UInt16 = 0x08

    /// What a meta page says.
    struct Meta {
        var pageSize: Int
        var lastPage: UInt64
        var transactionID: UInt64
    }

    /// Throws when `directory` cannot hold an LMDB store; creates the directory (not its parents)
    /// when nothing exists at the path. Looks at what is there before opening anything, so a FIFO
    /// or a device is refused instead of blocking the open. The data file is checked later, under
    /// the open lock (``checkDataFile(_:)``).
    /// - Returns: whether this call created the directory.
    /// - Throws: `StrataError.notAStore` (a file, a FIFO, a device), `.storeFull` (no room for
    ///   the directory), or `.io` (a missing parent directory, permissions).
    @discardableResult
    static func prepareDirectory(_ directory: URL) throws(StrataError) -> Bool {
        let path = directory.path
        switch SystemCalls.fileKind(atPath: path) {
        case .directory?:
            return false
        case let kind?:
            throw notADirectory(path, kind)
        case nil:
            try makeStoreDirectory(path)
            return true
        }
    }

    /// The error for a store path where something other than a directory is: `.notAStore`
    /// saying what it is (a SQLite database, another file, a FIFO…).
    static func notADirectory(_ path: String, _ kind: FileKind) -> StrataError {
        let reason =
            switch kind {
            case .regularFile where isSQLite(path): "it is a SQLite database file"
            case .regularFile: "it is a file, and an LMDB store is a directory"
            default: "it is \(kind.description), and an LMDB store is a directory"
            }
        return .notAStore(path: path, reason: reason)
    }

    /// Creates the store directory at `path` (nothing exists there), but not its parent: a
    /// mistyped parent would otherwise silently start a new store elsewhere.
    private static func makeStoreDirectory(_ path: String) throws(StrataError) {
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        switch SystemCalls.fileKind(atPath: parent) {
        case .directory?:
            break
        case nil:
            throw .io(
                """
                cannot create the store directory \(path): its parent directory \(parent) does not exist; check \
                that the directory exists (Strata creates the store's own directory, not its parents)
                """)
        case let kind?:
            throw .io(
                """
                cannot create the store directory \(path): its parent \(parent) is \(kind.description), not a \
                directory; check the path
                """)
        }
        let error = SystemCalls.makeDirectory(path)
        switch error {
        case 0:
            return
        case EEXIST where SystemCalls.fileKind(atPath: path) == .directory:
            return // another process made it meanwhile
        case ENOSPC, EDQUOT:
            throw .storeFull(
                "cannot create the store directory \(path): \(SystemCalls.errorText(error)). Free space on its disk.",
                native: mkdirError(error))
        default:
            throw .io(
                "cannot create the store directory \(path): \(SystemCalls.errorText(error))",
                native: mkdirError(error))
        }
    }

    /// `mkdir`'s `errno` as the native cause.
    private static func mkdirError(_ code: Int32) -> NativeError {
        NativeError(engine: "lmdb", code: Int(code), message: SystemCalls.errorText(code), operation: "mkdir")
    }

    /// Whether `path` is a regular file that starts with SQLite's header (anything else, a FIFO
    /// included, is not opened).
    static func isSQLite(_ path: String) -> Bool {
        guard SystemCalls.fileKind(atPath: path) == .regularFile,
            let handle = FileHandle(forReadingAtPath: path)
        else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == Data("SQLite format 3\0".utf8)
    }

    /// Checks `data.mdb` against its newest meta page.
    ///
    /// Race-free against processes committing meanwhile: the meta pages are read **first** and
    /// the file size **last**. LMDB writes a transaction's data pages before the meta page that
    /// names them, and never shrinks the file, so a size read after the meta pages covers every
    /// page they name, however many commits happen in between. (Read the other way round, a
    /// commit between the two reads made a healthy store look truncated.)
    static func checkDataFile(_ path: String) throws(StrataError) {
        switch SystemCalls.fileKind(atPath: path) {
        case nil: return
        case .regularFile?: break
        case let kind?: throw .notAStore(path: path, reason: "data.mdb is \(kind.description), not a regular file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .io("cannot read \(path): permission denied or not a regular file")
        }
        defer { try? handle.close() }
        func read(at offset: UInt64) throws(StrataError) -> Data {
            do {
                try handle.seek(toOffset: offset)
                return try handle.read(upToCount: 4096) ?? Data()
            } catch {
                throw .io("cannot read \(path): \(error.localizedDescription)")
            }
        }
        func fileSize() throws(StrataError) -> UInt64 {
            do {
                return try handle.seekToEnd()
            } catch {
                throw .io("cannot read the size of \(path): \(error.localizedDescription)")
            }
        }
        let first = try read(at: 0)
        if first.isEmpty { throw .notAStore(path: path, reason: "data.mdb is empty (0 bytes)") }
        // Each directory has its own lock file: a data file reachable from two directories
        // would be written without shared locking.
        if let links = (try? FileManager.default.attributesOfItem(atPath: path))?[.referenceCount] as? Int, links > 1 {
            throw .misuse(
                """
                \(path) has \(links) hard links. LMDB keeps its lock file beside the data file, so two \
                directories sharing one data.mdb would write it without common locking: remove the extra links \
                and open the store through one directory
                """
            )
        }
        if isSQLite(path) { throw .notAStore(path: path, reason: "data.mdb is a SQLite database") }
        guard let meta0 = parseMeta(first) else {
            throw .notAStore(path: path, reason: "data.mdb does not start with an LMDB meta page")
        }
        let pageSize = meta0.pageSize
        let second = try read(at: UInt64(pageSize))
        guard let meta1 = parseMeta(second), meta1.pageSize == pageSize else {
            let size = try fileSize()
            if size < UInt64(2 * pageSize) {
                throw .storeCorrupt(
                    "\(path) is truncated: \(size) bytes cannot hold its two meta pages of \(pageSize) bytes")
            }
            throw .storeCorrupt("\(path): the second LMDB meta page is damaged")
        }
        let size = try fileSize()
        let newest = meta1.transactionID > meta0.transactionID ? meta1 : meta0
        let (pages, overflow) = newest.lastPage.addingReportingOverflow(1)
        let (needed, overflow2) = pages.multipliedReportingOverflow(by: UInt64(pageSize))
        guard !overflow, !overflow2, size >= needed else {
            throw .storeCorrupt(
                """
                \(path) is truncated: \(size) bytes, but its newest meta page (transaction \
                \(newest.transactionID)) uses \(pages) pages of \(pageSize) bytes
                """
            )
        }
    }

    /// The newest transaction ID the meta pages of `data.mdb` at `path` name (0 when neither
    /// parses): how far the store's commits have come, read from the file itself.
    /// - Throws: `.io` when the file cannot be read.
    static func newestTransaction(_ path: String) throws(StrataError) -> UInt64 {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .io("cannot read \(path): permission denied or not a regular file")
        }
        defer { try? handle.close() }
        do {
            let first = try handle.read(upToCount: 4096) ?? Data()
            guard let meta0 = parseMeta(first) else { return 0 }
            try handle.seek(toOffset: UInt64(meta0.pageSize))
            let meta1 = parseMeta(try handle.read(upToCount: 4096) ?? Data())
            return max(meta0.transactionID, meta1?.transactionID ?? 0)
        } catch {
            throw .io("cannot read the meta pages of \(path): \(error.localizedDescription)")
        }
    }

    /// Parses the meta page at the start of `page`, or nil when it is not one.
    static func parseMeta(_ page: Data) -> Meta? {
        let metaOffset = headerSize
        guard page.count >= metaOffset + 136 + 8 else { return nil }
        let bytes = [UInt8](page)
        /// The little-endian integer of `size` bytes at `offset` (inside the length checked above).
        func little(_ offset: Int, _ size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in (offset..<offset + size).reversed() { value = value << 8 | UInt64(bytes[index]) }
            return value
        }
        guard UInt16(little(10, 2)) & metaFlag != 0 else { return nil }
        guard UInt32(little(metaOffset, 4)) == magic, UInt32(little(metaOffset + 4, 4)) == dataVersion else {
            return nil
        }
        let pageSize = Int(little(metaOffset + 24, 4))
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        return Meta(
            pageSize: pageSize, lastPage: little(metaOffset + 120, 8), transactionID: little(metaOffset + 128, 8))
    }
}

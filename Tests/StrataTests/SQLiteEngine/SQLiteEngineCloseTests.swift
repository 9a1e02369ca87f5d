import Foundation
import Strata
import StrataTestSupport
import Testing

/// Closing a SQLite store leaves one file: the write-ahead log is folded into it and removed, as
/// SQLite does when its last connection closes. Before, the writer closed first and the readers
/// after it; SQLite then skipped the fold (other connections were open), the read-only readers
/// could not do it, and the log stayed beside the file after every process that had read: a copy
/// of the `.sqlite` file alone lacked the last commits.
@Suite("SQLiteEngine close")
struct SQLiteEngineCloseTests {
    @Test("after writes and reads, close() folds the write-ahead log into the file")
    func closeFoldsTheLog() async throws {
        let store = try TestStore(.sqlite)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            for memo in ["rent", "food", "books"] { Entry(context: context).memo = memo }
            try context.save()
        }
        // A read through a reader connection, which the pool then keeps.
        let reader = container.newBackgroundContext()
        let count = try await reader.perform { try reader.count(for: FetchRequest<Entry>()) }
        #expect(count == 3)
        container.close()
        let path = store.configuration.location.path
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the log stayed beside \(path)")
        // The file alone holds every row.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("close-copy-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(atPath: path, toPath: copy.path)
        let rows = try RawSQLite(path: copy.path).strings("SELECT memo FROM Entry ORDER BY memo")
        #expect(rows == ["books", "food", "rent"], "\(rows)")
    }
}

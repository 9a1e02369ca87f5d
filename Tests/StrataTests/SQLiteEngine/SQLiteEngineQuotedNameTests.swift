import Foundation
import Strata
import Testing

/// The engine double-quotes every name it writes; SQLite's legacy rule reads a double-quoted name
/// that is not a column as a string literal. With it turned off, a store whose table lost a column
/// (a hand edit, a broken migration) fails to read with an error instead of returning the column's
/// own name as every value.
@Suite("SQLiteEngine quoted names")
struct SQLiteEngineQuotedNameTests {
    @Test("a missing column is an error, never its name read back as a value")
    func aMissingColumnIsAnError() async throws {
        let store = try TestStore(.sqlite)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            Entry(context: context).memo = "rent"
            try context.save()
        }
        container.close()
        let raw = try RawSQLite(path: store.directory.appendingPathComponent("store.sqlite").path)
        try raw.execute("ALTER TABLE \"Entry\" RENAME COLUMN \"memo\" TO \"note\"")

        let reopened = try store.open()
        defer { reopened.close() }
        let reader = reopened.newBackgroundContext()
        let result = await #expect(throws: StrataError.self) {
            try await reader.perform { try reader.fetch(FetchRequest<Entry>()).map(\.memo) }
        }
        #expect(result?.native?.message.contains("no such column") == true, "\(String(describing: result))")
    }
}

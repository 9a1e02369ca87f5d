import Foundation
import Strata
import Testing

/// One 300 MB string saved and read back on every engine: it round-trips, and the test prints
/// the process's peak resident memory during the save and the read (`VmHWM`, reset first
/// through `/proc/self/clear_refs`), above what it was before. Printed, not asserted: run it
/// alone to read the figure (`--filter LargeValueMemoryTests`), since other tests share the
/// process.
@Suite("memory of one very large value", .serialized)
struct LargeValueMemoryTests {
    static let megabytes = 300

    @Test("a 300 MB string saves and reads back; the peak memory above it is printed", arguments: EngineKind.allCases)
    func hugeString(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let text = String(repeating: "x", count: Self.megabytes * 1_000_000 - 1) + "y"
        Self.resetPeak()
        let before = Self.status("VmRSS")
        let id = try await container.performUnitOfWork { context in
            let entry = Entry(context: context)
            entry.memo = text
            try context.save()
            return entry.objectID
        }
        let afterSave = Self.status("VmHWM")
        Self.resetPeak()
        let context = container.newBackgroundContext()
        let matches = try await context.perform {
            let memo = try context.existingObject(with: id, as: Entry.self).memo
            return memo.utf8.count == text.utf8.count && memo == text
        }
        let afterRead = Self.status("VmHWM")
        #expect(matches, "the string read back differs")
        print(
            """
            \(kind) \(Self.megabytes) MB string: peak RSS above the \(before / 1024) MB before: save \
            +\((afterSave - before) / 1024) MB, read back +\((afterRead - before) / 1024) MB
            """)
    }

    /// Resets the peak resident set size (`VmHWM`) to the current one.
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// A `/proc/self/status` value in kB.
    static func status(_ field: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

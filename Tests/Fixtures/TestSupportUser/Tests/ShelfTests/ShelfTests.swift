import Foundation
import Shelf
import Strata
import StrataSQLite
import StrataTestSupport
import Testing

@Suite("a user's tests with StrataTestSupport, built without libpq")
struct ShelfTests {
    @Test("a commit that fails writes nothing, and the next one works")
    func failedCommitWritesNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let faults = FaultController()
        let shelf = try Shelf(
            engine: .faultInjecting(.sqlite(at: directory.appendingPathComponent("shelf.sqlite")), faults: faults))
        try await shelf.add(2, of: "Dune")
        faults.failCommit()
        await #expect(throws: StrataError.self) { try await shelf.add(5, of: "Dune") }
        #expect(try await shelf.copies(of: "Dune") == 2)
        try await shelf.add(1, of: "Dune")
        #expect(try await shelf.copies(of: "Dune") == 3)
        #expect(faults.injectedFailures == 1)
    }
}

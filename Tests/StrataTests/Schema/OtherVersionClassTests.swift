import Foundation
import Strata
import Testing

/// A class of another schema version used with a container (the mistake a migration stage
/// invites: `willMigrate` sees the old version's classes, `didMigrate` the new one's): the
/// error names the class the container's schema uses for that entity, instead of saying the
/// entity is missing from a schema that lists it.
@Suite("a class of another schema version")
struct OtherVersionClassTests {
    @Test("fetching or inserting it is misuse naming the class to use", arguments: EngineKind.allCases)
    func otherVersionClass(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open(schema: try Schema([IMNoteWithSubtitle.self]))
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (fetched, saved) = try await context.perform { () -> (String, String) in
            var fetched = ""
            do {
                _ = try context.fetch(FetchRequest<IMNoteWithShelf>())
            } catch StrataError.misuse(let detail, _) {
                fetched = detail
            }
            _ = IMNoteWithShelf(context: context)
            var saved = ""
            do {
                try context.save()
            } catch StrataError.misuse(let detail, _) {
                saved = detail
            }
            return (fetched, saved)
        }
        for message in [fetched, saved] {
            #expect(
                message.contains("IMNoteWithShelf is not the class this container's schema uses for the entity Note"))
            #expect(message.contains("use StrataTests.IMNoteWithSubtitle"), "\(message)")
        }
    }
}

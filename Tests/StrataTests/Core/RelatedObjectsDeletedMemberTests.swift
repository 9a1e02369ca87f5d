import Foundation
import Strata
import Testing

/// `RelatedObjects.remove(_:)` answers like `contains(_:)` for a member deleted in the context:
/// it is no longer related, so removing it returns nil (one-to-many and many-to-many).
@Suite("related objects: a deleted member")
struct RelatedObjectsDeletedMemberTests {
    @Test("remove of a member deleted in the context returns nil, like contains", arguments: EngineKind.allCases)
    func removeDeleted(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let answers = try await context.perform {
            let account = Account(context: context)
            account.name = "Checking"
            let kept = Entry(context: context)
            let gone = Entry(context: context)
            kept.account = account
            gone.account = account
            let keptTag = Tag(context: context)
            let goneTag = Tag(context: context)
            account.tags.insert(keptTag)
            account.tags.insert(goneTag)
            try context.save()
            context.delete(gone)
            context.delete(goneTag)
            return [
                "entries.contains(deleted)": account.entries.contains(gone),
                "entries.remove(deleted)": account.entries.remove(gone) != nil,
                "entries.remove(kept)": account.entries.remove(kept) != nil,
                "entries.count": account.entries.count == 0,
                "tags.contains(deleted)": account.tags.contains(goneTag),
                "tags.remove(deleted)": account.tags.remove(goneTag) != nil,
                "tags.remove(kept)": account.tags.remove(keptTag) != nil,
                "tags.count": account.tags.count == 0,
            ]
        }
        #expect(
            answers == [
                "entries.contains(deleted)": false, "entries.remove(deleted)": false, "entries.remove(kept)": true,
                "entries.count": true,
                "tags.contains(deleted)": false, "tags.remove(deleted)": false, "tags.remove(kept)": true,
                "tags.count": true,
            ])
    }
}

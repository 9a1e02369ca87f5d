import Foundation
import Strata
import Testing

/// Creating a store on a disk too small for it fails with `.storeFull`, never `.io` or
/// `.storeCorrupt`, and leaves nothing that stops a later open once there is room.
///
/// Found by an outside probe: SQLite said `.io` "the new store's write-ahead log … was not
/// checkpointed when it was closed; check the disk" when the disk filled while the store was
/// made, and LMDB left a `data.mdb` of 0 or 4,096 bytes that every later open refused (the second
/// as damaged). The test tries disks of every size from nearly nothing to enough, in 4 KiB steps,
/// so that one of them fills at each step of the creation. Mounting needs root, which the tests
/// have here and in CI.
@Suite("creating a store on a full disk", .serialized)
struct FullDiskCreationTests {
    @Test(
        "every failure is .storeFull, and the store opens once there is room",
        // Not PostgreSQL or memory: the tmpfs holds only a file engine's store.
        arguments: EngineKind.fileEngines)
    func creationOnFullDisk(kind: EngineKind) async throws {
        var failures = 0
        var successes = 0
        for kilobytes in stride(from: 4, through: 240, by: 4) {
            try await FullDiskTests.withDisk(size: "\(kilobytes)k") { disk in
                let configuration = kind.configuration(in: disk)
                do {
                    try PersistentContainer(schema: TestModels.schema, engine: configuration).close()
                    successes += 1
                    return
                } catch StrataError.storeFull {
                    failures += 1
                } catch {
                    Issue.record("\(kilobytes) KiB: expected .storeFull, got \(error)")
                    return
                }
                // Room again: the same path opens (what the failed creation left does not stop it).
                #expect(FullDiskTests.run("/bin/mount", ["-o", "remount,size=4m", disk.path]) == 0)
                do {
                    let container = try PersistentContainer(schema: TestModels.schema, engine: configuration)
                    _ = try await Account.insert(named: "after", into: container)
                    container.close()
                } catch {
                    Issue.record("\(kilobytes) KiB: after the disk grew, the store did not open: \(error)")
                }
            }
        }
        #expect(failures > 0 && successes > 0, "failures \(failures), successes \(successes)")
    }
}

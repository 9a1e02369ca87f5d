import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata copy` and `strata backup` into a disk too small for them fail with a `strata:` line,
/// and whatever they leave is never taken for a good store.
///
/// Found by an outside probe: on a disk with room for a new LMDB store but not for the mark, the
/// copy failed (exit 9) after creating the target, which was then empty, unmarked, and passed
/// `strata verify` as sound; a SQLite backup into a full disk named the source as full and left
/// a `-journal` file at the destination. The tests try disks of every size from nearly nothing to
/// enough, in steps of a few KiB, so that one of them fills at each step. Mounting needs root,
/// which the tests have here and in CI.
@Suite("strata copy and backup into a full disk", .serialized)
struct ToolCopyFullDiskTests {
    @Test(
        "a copy that runs out of room leaves no target that verifies as sound",
        // Not PostgreSQL or memory: the tmpfs holds only a file engine's target.
        arguments: EngineKind.fileEngines)
    func copyIntoFullDisk(kind: EngineKind) async throws {
        let source = try await ToolFixture.seededStore(.sqlite)
        let sourceArgument = try StrataCommandRun.argument(for: source)
        var failures = 0
        var successes = 0
        for kilobytes in stride(from: 8, through: 200, by: 4) {
            try await FullDiskTests.withDisk(size: "\(kilobytes)k") { disk in
                let target = kind == .lmdb ? "lmdb:" + disk.path + "/t.lmdb" : "sqlite:" + disk.path + "/t.sqlite"
                let copy = try await StrataCommandRun.run(["copy", sourceArgument, target])
                let verify = try await StrataCommandRun.run(["verify", target])
                if copy.status == 0 {
                    successes += 1
                    #expect(verify.status == 0, "\(kilobytes) KiB: the copy succeeded but verify says \(verify.output)")
                    return
                }
                failures += 1
                #expect(copy.status == 9 && copy.error.hasPrefix("strata: "), "\(kilobytes) KiB: \(copy.error)")
                #expect(
                    verify.status != 0,
                    "\(kilobytes) KiB: the copy failed (\(copy.error)) but its target verifies: \(verify.output)")
            }
        }
        // Both outcomes were met, so the sizes spanned the copy's every step.
        #expect(failures > 0 && successes > 0, "failures \(failures), successes \(successes)")
    }

    @Test(
        "a backup that runs out of room names its destination and leaves nothing there",
        arguments: EngineKind.fileEngines)
    func backupIntoFullDisk(kind: EngineKind) async throws {
        let source = try await ToolFixture.seededStore(kind)
        let sourceArgument = try StrataCommandRun.argument(for: source)
        var failures = 0
        var successes = 0
        for kilobytes in stride(from: 8, through: 200, by: 8) {
            try await FullDiskTests.withDisk(size: "\(kilobytes)k") { disk in
                let destination = disk.appendingPathComponent(kind == .lmdb ? "b.lmdb" : "b.sqlite").path
                let backup = try await StrataCommandRun.run(["backup", sourceArgument, destination])
                if backup.status == 0 {
                    successes += 1
                    return
                }
                failures += 1
                // The full disk is the destination's: the message names it, not the source.
                #expect(backup.status == 9 && backup.error.contains(disk.path), "\(kilobytes) KiB: \(backup.error)")
                let left = try FileManager.default.contentsOfDirectory(atPath: disk.path)
                #expect(left.isEmpty, "\(kilobytes) KiB: the failed backup left \(left)")
            }
        }
        #expect(failures > 0 && successes > 0, "failures \(failures), successes \(successes)")
    }
}

import Foundation
import Strata
import Testing

/// Several processes create the same new store at the same moment: exactly one creates it, the
/// others wait for it and open it, and every process's insert lands. 8 processes × 25 rounds per
/// engine (100 rounds with `STRATA_STRESS=1`).
@Suite("creation races", .serialized)
struct CreationRaceTests {
    static let processes = 8
    static let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 100 : 25

    /// Other processes open the store: the engines they share (``EngineKind/sharedAcrossProcesses``);
    /// in another process an in-memory store's name is a store of its own.
    @Test("processes racing to create one store all open it and write", arguments: EngineKind.sharedAcrossProcesses)
    func concurrentFirstOpen(kind: EngineKind) async throws {
        try LifetimeProbe.requireBuilt()
        var failures: [String] = []
        for round in 0..<Self.rounds {
            let store = try TestStore(kind)
            let location = store.configuration.location
            let probes = try (0..<Self.processes).map { index in
                try LifetimeProbe("open-write", engine: kind.rawValue, store: location, ["name": "p\(index)"])
            }
            for (index, probe) in probes.enumerated() {
                let lines = await probe.collectRemainingLines()
                if lines != ["ok"] {
                    failures.append("round \(round) process \(index): \(lines.joined(separator: " | "))")
                }
            }
            let container = try store.open(schema: try Schema(version: 1, [CreationRaceItem.self]))
            let context = container.newBackgroundContext()
            let count = try await context.perform { try context.count(for: FetchRequest<CreationRaceItem>()) }
            if count != Self.processes {
                failures.append("round \(round): \(count) items stored, not \(Self.processes)")
            }
        }
        print("creation race \(kind): \(Self.rounds) rounds × \(Self.processes) processes, \(failures.count) failures")
        #expect(failures.count == 0, "\(failures.prefix(5))")
    }
}

/// The probe's entity, declared here under the probe's class name so the store's schema matches
/// (a store records its whole schema and refuses another shape: keep this in step with
/// `ProbeItem` in `Tests/HelperPrograms/StrataProbe/ProbeSupport.swift`).
final class CreationRaceItem: ManagedObject {
    override class var entityName: String { "ProbeItem" }
    @Attribute(.unique) var name = ""
    @Attribute var value: Int64 = 0
    @Attribute var note = ""

    /// The probe's schema (`ProbeModel.schema()`), for stores a test shares with the probe.
    static func probeSchema() throws -> Schema { try Schema(version: 1, [CreationRaceItem.self]) }
}

import Foundation
import Strata
import Testing

/// Opening an LMDB store while other processes keep growing it must never call the healthy
/// store truncated (or anything else): the file check reads the meta pages before the size.
/// Every process starts with a 1 MiB map, which the writers' data outgrows, so each process
/// also keeps working while another grows the map under it.
@Suite("open while writing", .serialized)
struct OpenWhileWritingTests {
    static let mapSize = "\(1 << 20)"
    static let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 10 : 2

    @Test("processes opening an LMDB store that two others are growing see no false damage")
    func opensDuringWrites() async throws {
        try LifetimeProbe.requireBuilt()
        var errors: [String] = []
        var opens = 0
        for round in 0..<Self.rounds {
            let store = try TestStore(.lmdb)
            let location = store.configuration.location
            // The store exists before the race, so every open checks a populated, growing file.
            _ = try await LifetimeProbe(
                "open-write", engine: "lmdb", store: location, ["name": "seed", "map-size": Self.mapSize]
            ).collectRemainingLines()
            let writers = try (0..<2).map { index in
                try LifetimeProbe(
                    "write-loop", engine: "lmdb", store: location,
                    [
                        "name": "w\(index)", "count": "300", "batch": "8", "map-size": Self.mapSize,
                    ])
            }
            let openers = try (0..<3).map { _ in
                try LifetimeProbe(
                    "open-loop", engine: "lmdb", store: location, ["count": "120", "map-size": Self.mapSize])
            }
            defer {
                // The file never exceeds the map: past 1 MiB, the writers grew the map under the others.
                let data = location.appendingPathComponent("data.mdb").path
                let size = (try? FileManager.default.attributesOfItem(atPath: data)[.size] as? Int) ?? 0
                #expect(size > 1 << 20, "round \(round): the data file (\(size) bytes) never outgrew the first map")
            }
            for probe in openers + writers {
                for line in await probe.collectRemainingLines() {
                    if line.hasPrefix("ok ") && openers.contains(where: { $0 === probe }) {
                        opens += Int(line.dropFirst(3)) ?? 0
                    }
                    if !line.hasPrefix("ok") { errors.append("round \(round): \(line)") }
                }
            }
        }
        let corrupt = errors.filter { $0.contains("storeCorrupt") }
        print(
            """
            open while writing: \(opens) opens during writes, \(corrupt.count) false storeCorrupt, \
            \(errors.count) errors
            """
        )
        #expect(errors.count == 0, "\(errors.prefix(5))")
        #expect(opens == Self.rounds * 3 * 120)
    }
}

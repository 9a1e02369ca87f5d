import Foundation
import Strata

/// Commits made by another process on the store reach this process's observers, every one, in
/// order, with their author. (On an engine not shared across processes, another container of
/// this process makes them: see ``EngineCapabilities``.)
enum HistoryProcessChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "an observer receives every commit of another process on the store, in order, with its author",
            crossProcess)
    ]

    static let peerSaves = 40
    static let localSaves = 10

    static func crossProcess(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let receiving = kit.receive(localSaves + peerSaves, from: container.changes())
        // This process's saves come first: they wake the observer in-process, while only watching
        // the store can tell it of the peer's, which all come after.
        var local: [ObjectID] = []
        for index in 0..<localSaves {
            let context = container.newBackgroundContext(named: "local")
            local.append(
                try await context.perform {
                    let account = KitAccount(context: context)
                    account.name = "local-\(index)"
                    try context.save()
                    return account.objectID
                })
        }
        let arguments = [
            "commit", "--store", kit.configuration.location.path, "--count", "\(peerSaves)", "--author", "peer",
            "--prefix", "peer",
        ]
        do {
            try await kit.inOtherOpener(arguments, "the peer") { configuration in
                try await peerCommits(engine: configuration, count: peerSaves, author: "peer", prefix: "peer")
            }
        } catch {
            receiving.cancel()
            throw error
        }
        let received = try await kit.value(of: receiving, "receiving \(peerSaves + localSaves) transactions")
        try kit.expectEqual(received.count, peerSaves + localSaves, "transactions received")
        try kit.expectIncreasing(received, "transactions received")
        try kit.expectEqual(
            received.map { $0.author ?? "nil" },
            Array(repeating: "local", count: localSaves)
                + Array(repeating: "peer", count: peerSaves), "the authors of the transactions received")
        try kit.expectEqual(
            received.filter { $0.author == "local" }.flatMap { $0.changes.map(\.objectID) }, local,
            "this process's objects, in delivery order")
        let peerObjects = received.filter { $0.author == "peer" }.map { $0.changes.map(\.objectID) }
        try kit.expect(peerObjects.allSatisfy { $0.count == 1 }, "each peer transaction names its one object")
        let names = try await container.read { context in
            try peerObjects.joined().map { try context.existingObject(with: $0, as: KitAccount.self).name }
        }
        try kit.expectEqual(names, (0..<peerSaves).map { "peer-\($0)" }, "the peer's accounts, in delivery order")
    }

    /// The peer's side of ``crossProcess(_:)``: `count` saves, one account each, by `author`.
    static func peerCommits(engine: EngineConfiguration, count: Int, author: String, prefix: String) async throws {
        let container = try PersistentContainer(schema: KitModels.schema, engine: engine)
        defer { container.close() }
        for index in 0..<count {
            let context = container.newBackgroundContext(named: author)
            try await context.perform {
                KitAccount(context: context).name = "\(prefix)-\(index)"
                try context.save()
            }
        }
    }
}

import Foundation
import Strata

/// Offsets and limits at the edges of `Int`, through every fetch path: each valid value gives
/// the plain-Swift window of the full result, a negative one gives `.misuse`, none traps.
enum FetchWindowChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Fetch semantics",
            "offsets and limits from 0 to Int.max give the right window on every fetch path and in count", edges),
        ConformanceCheck(
            "Fetch semantics", "a negative offset or limit is refused with misuse on every fetch path and in count",
            negatives),
    ]

    static let offsets = [0, 1, 3, Int.max - 1, Int.max]
    static let limits: [Int?] = [nil, 0, 1, 2, Int.max - 1, Int.max]

    /// One way to reach the engine: the request to send (with the window added), and whether
    /// the context must hold an unsaved change so that the in-memory path runs.
    struct Shape: Sendable {
        let label: String
        let unsaved: Bool
        let request: @Sendable (_ limit: Int?, _ offset: Int) -> FetchRequest<KitAccount>
    }

    static let shapes: [Shape] = {
        let base: [(String, @Sendable (Int?, Int) -> FetchRequest<KitAccount>)] = [
            ("no sort", { FetchRequest(fetchLimit: $0, fetchOffset: $1) }),
            (
                "sorted by balance",
                { FetchRequest(sortBy: [SortDescriptor(\.balance)], fetchLimit: $0, fetchOffset: $1) }
            ),
            (
                "predicate pushed down",
                { FetchRequest(predicate: #Predicate { $0.balance > 0 }, fetchLimit: $0, fetchOffset: $1) }
            ),
            // `debt` is computed (-balance): the predicate cannot compile and runs in memory.
            (
                "predicate in memory",
                { FetchRequest(predicate: #Predicate { $0.debt < 0 }, fetchLimit: $0, fetchOffset: $1) }
            ),
        ]
        return base.flatMap { label, request in
            [
                Shape(label: label, unsaved: false, request: request),
                Shape(label: "\(label), with an unsaved change", unsaved: true, request: request),
            ]
        }
    }()

    /// The window by the documented rule, in arithmetic that cannot overflow.
    static func window(_ names: [String], offset: Int, limit: Int?) -> [String] {
        let start = min(offset, names.count)
        let rest = names.count - start
        return Array(names[start..<(start + min(limit ?? rest, rest))])
    }

    /// Five saved accounts, n1...n5 with balances 10...50: every shape selects all of them, in
    /// key order (which is also balance order). The unsaved shapes add n6 (balance 60).
    static func seed(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            for index in 1...5 {
                let account = KitAccount(context: context)
                account.name = "n\(index)"
                account.balance = Int64(index * 10)
            }
            try context.save()
        }
    }

    static func edges(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        for shape in shapes {
            let outcome = try await container.read { context in
                if shape.unsaved {
                    let extra = KitAccount(context: context)
                    extra.name = "n6"
                    extra.balance = 60
                }
                let full = try context.fetch(shape.request(nil, 0)).map(\.name)
                var mismatches: [String] = []
                for offset in offsets {
                    for limit in limits {
                        let request = shape.request(limit, offset)
                        let expected = window(full, offset: offset, limit: limit)
                        let fetched = try context.fetch(request).map(\.name)
                        let counted = try context.count(for: request)
                        if fetched != expected || counted != expected.count {
                            mismatches.append(
                                """
                                offset \(offset) limit \(limit.map(String.init) ?? "nil"): fetched \(fetched), \
                                counted \(counted), expected \(expected)
                                """
                            )
                        }
                    }
                }
                return (full, mismatches)
            }
            let expectedFull = shape.unsaved ? ["n1", "n2", "n3", "n4", "n5", "n6"] : ["n1", "n2", "n3", "n4", "n5"]
            try kit.expectEqual(outcome.0, expectedFull, "\(shape.label): the whole result")
            try kit.expect(outcome.1.isEmpty, "\(shape.label): \(outcome.1.joined(separator: "; "))")
        }
    }

    static func negatives(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let windows: [(offset: Int, limit: Int?)] = [
            (-1, nil), (0, -1), (Int.min, nil), (0, Int.min), (-1, -1), (Int.max, -1), (-1, Int.max),
        ]
        for shape in shapes {
            for window in windows {
                let request = shape.request(window.limit, window.offset)
                let label = "\(shape.label), offset \(window.offset) limit \(window.limit.map(String.init) ?? "nil")"
                let errors = try await container.read { context in
                    if shape.unsaved { KitAccount(context: context).name = "unsaved" }
                    return try ConformanceHarness.strataErrors(of: [
                        { _ = try context.fetch(request) }, { _ = try context.count(for: request) },
                    ])
                }
                for (error, call) in zip(errors, ["fetch", "count"]) {
                    guard case .misuse(let message, _)? = error else {
                        throw kit.fail(
                            "\(label): \(call) gave \(error.map { "\($0)" } ?? "no error"), expected .misuse")
                    }
                    let field =
                        window.offset < 0 ? "fetchOffset is \(window.offset)" : "fetchLimit is \(window.limit ?? 0)"
                    try kit.expect(
                        message.contains(field),
                        "\(label): \(call)'s message names the field and value (\(field)): \(message)")
                }
            }
        }
    }
}

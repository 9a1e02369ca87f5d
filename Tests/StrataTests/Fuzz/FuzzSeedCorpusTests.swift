import Foundation
import Testing

/// Replays the checked-in seed corpus (Tests/Fuzz/corpus/<target>) through the same check
/// functions the libFuzzer targets run, so the harness logic is compiled and exercised by every
/// `swift test` and cannot rot between fuzzing sessions.
@Suite("fuzz seed corpus replay")
struct FuzzSeedCorpusTests {
    /// Tests/Fuzz/corpus, found from this file's path.
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus")

    static func inputs(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = corpus.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { ($0, Array(try Data(contentsOf: folder.appendingPathComponent($0)))) }
    }

    static func replay(_ target: String, _ check: ([UInt8]) throws(FuzzViolation) -> Void) throws {
        let inputs = try inputs(target)
        #expect(!inputs.isEmpty, "no seeds in Tests/Fuzz/corpus/\(target)")
        for input in inputs {
            do {
                try check(input.bytes)
            } catch {
                Issue.record("seed \(target)/\(input.name): \(error)")
            }
        }
    }

    @Test("object-URI parser seeds")
    func uri() throws {
        try Self.replay("uri", URIFuzzCheck.check)
    }

    @Test("LMDB row decoder seeds")
    func row() throws {
        try Self.replay("row", RowFuzzCheck.check)
    }

    @Test("predicate compiler seeds")
    func predicate() throws {
        try Self.replay("predicate", PredicateFuzzCheck.check)
    }
}

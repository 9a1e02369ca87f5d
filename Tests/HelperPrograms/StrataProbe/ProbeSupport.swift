import Foundation
import PostgresTestStores
import Strata
import StrataLMDB
import StrataSQLite
import StrataTestSupport

/// One probe mode: reads its options, does its work, prints result lines, returns the exit status.
typealias ProbeMode = @Sendable (ProbeArguments) async throws -> Int32

/// The command line of a probe: a mode name, then `--option value` pairs.
struct ProbeArguments: Sendable {
    let mode: String?
    private let options: [String: String]

    init(_ words: ArraySlice<String>) {
        mode = words.first
        var options: [String: String] = [:]
        var rest = words.dropFirst()
        while let word = rest.first, word.hasPrefix("--") {
            rest = rest.dropFirst()
            options[String(word.dropFirst(2))] = rest.first ?? ""
            rest = rest.dropFirst()
        }
        self.options = options
    }

    /// The value of `--name`, or nil.
    func value(_ name: String) -> String? { options[name] }

    /// The value of `--name`, or a thrown usage error.
    func required(_ name: String) throws -> String {
        guard let value = options[name] else { throw ProbeUsageError(message: "missing --\(name)") }
        return value
    }

    /// The integer value of `--name`, or `fallback` when it is absent.
    func integer(_ name: String, default fallback: Int) throws -> Int {
        guard let text = options[name] else { return fallback }
        guard let value = Int(text) else { throw ProbeUsageError(message: "--\(name) needs an integer, got \(text)") }
        return value
    }

    /// The engine configuration named by `--engine` for the store at `--store`; on LMDB,
    /// `--map-size` sets the initial map size (default: `LMDBOptions`'s); on PostgreSQL, the
    /// path names the store's schema on the test server (`TestPostgres`).
    func engine() throws -> EngineConfiguration {
        let url = URL(fileURLWithPath: try required("store"))
        switch try required("engine") {
        case "sqlite": return .sqlite(at: url)
        case "postgres": return TestPostgres.configuration(at: url)
        case "lmdb":
            let mapSize = try integer("map-size", default: LMDBOptions().initialMapSize)
            return .lmdb(at: url, options: LMDBOptions(initialMapSize: mapSize))
        case let other: throw ProbeUsageError(message: "unknown engine \(other)")
        }
    }
}

/// Wrong arguments: the probe exits with status 2.
struct ProbeUsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Result lines, one per operation, flushed at once so that a killed probe loses none it printed.
enum ProbeOutput {
    static func ok(_ detail: String = "") {
        line(detail.isEmpty ? "ok" : "ok \(detail)")
    }

    static func failure(_ error: any Error) {
        line("error \(caseName(error)): \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
    }

    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// The `StrataError` case name (`storeCorrupt`, `busy`, ...), or the error's type name.
    static func caseName(_ error: any Error) -> String {
        guard let error = error as? StrataError else { return String(describing: type(of: error)) }
        let mirror = Mirror(reflecting: error)
        return mirror.children.first?.label ?? String(describing: error)
    }
}

/// The probes' one entity.
final class ProbeItem: ManagedObject {
    @Attribute(.unique) var name = ""
    @Attribute var value: Int64 = 0
    /// Free text (tests churn pages by rewriting a large note).
    @Attribute var note = ""
}

enum ProbeModel {
    static func schema() throws -> Schema { try Schema(version: 1, [ProbeItem.self]) }
}

// Fails when a public declaration of the user module (`Strata`) names a type of the engine
// interface (`StrataStorage`) that `Strata` does not re-export: such a member would hand users
// an engine-level type (a `StoredValue`, a `FetchPlan`, a `StoreSchema`…) although
// `import Strata` keeps those names out of their namespace. The re-exported types are read from
// `Modules/Strata/Exports.swift`. Run by Scripts/check-api-surface.sh.
//
//   swift Scripts/Docs/api-surface.swift <repository root> <symbol graph dir>

import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: api-surface.swift <root> <symbol graph dir>\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[1])
let graphs = URL(fileURLWithPath: arguments[2])

func json(_ url: URL) -> [String: Any] {
    guard let data = try? Data(contentsOf: url),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else {
        FileHandle.standardError.write(Data("check-api-surface: cannot read \(url.path)\n".utf8))
        exit(2)
    }
    return object
}

func symbols(_ graph: [String: Any]) -> [[String: Any]] { graph["symbols"] as? [[String: Any]] ?? [] }

// The interface's public type names, and the ones Strata re-exports.
let interfaceTypes = Set(
    symbols(json(graphs.appendingPathComponent("StrataStorage.symbols.json"))).compactMap { symbol -> String? in
        let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String ?? ""
        let path = symbol["pathComponents"] as? [String] ?? []
        guard ["swift.struct", "swift.enum", "swift.class", "swift.protocol"].contains(kind), path.count == 1
        else { return nil }
        return path[0]
    })
let exports = (try? String(contentsOf: root.appendingPathComponent("Modules/Strata/Exports.swift"), encoding: .utf8)) ?? ""
let reexported = Set(
    exports.split(separator: "\n").compactMap { line -> String? in
        guard line.hasPrefix("@_exported"), let last = line.split(separator: ".").last else { return nil }
        return String(last)
    })
let hidden = interfaceTypes.subtracting(reexported)

// Every symbol graph of the user module: its own declarations and its extensions of others' types.
let files = (try? FileManager.default.contentsOfDirectory(atPath: graphs.path)) ?? []
var leaks: [String] = []
for file in files.sorted() where file == "Strata.symbols.json" || file.hasPrefix("Strata@") {
    for symbol in symbols(json(graphs.appendingPathComponent(file))) {
        let fragments = symbol["declarationFragments"] as? [[String: Any]] ?? []
        let named = fragments.compactMap { $0["kind"] as? String == "typeIdentifier" ? $0["spelling"] as? String : nil }
        let leaked = named.filter(hidden.contains)
        guard !leaked.isEmpty else { continue }
        let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
        leaks.append("\(path) (in \(file)) names \(leaked.joined(separator: ", "))")
    }
}
if leaks.isEmpty {
    print("check-api-surface: no public declaration of Strata names an engine-interface type it does not re-export")
    print("check-api-surface: re-exported: \(reexported.sorted().joined(separator: ", "))")
} else {
    for leak in leaks { print("check-api-surface: \(leak)") }
    print("check-api-surface: FAILED: \(leaks.count) public declarations leak engine-interface types")
    exit(1)
}

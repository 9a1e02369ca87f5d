// Reads the public symbol graphs of some modules and reports (1) every public or open
// declaration without a doc comment of its own and (2) every central type without a
// `## Topics` section, in its doc comment or in a DocC extension file of its module's catalog.
// Run by Scripts/check-doc-coverage.sh; see that script for the lists it passes.
//
//   swift Scripts/Docs/coverage.swift <repository root> <symbol graph dir> <modules> <central types>
//
// <modules> and <central types> are space-separated lists. Exit status 1 when anything is missing.
//
// What counts as documented: a `///` comment on the declaration itself, or, for a member that
// implements a protocol requirement (or overrides a superclass member) without one, the
// comment of that requirement, which the symbol graph carries over and DocC shows: the
// requirement says what the member means (`description`, `hash(into:)`, `Bool.columnType` of
// `AttributeValue`). Such members are counted apart, so the report shows how many lean on it.
// Synthesized members (defaults inherited from protocol extensions) are not in the graphs:
// symbol-graphs.sh passes --skip-synthesized-members.

import Foundation

struct Declaration {
    var module: String
    var path: String
    var kind: String
    var file: String
    var line: Int
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-doc-coverage: \(message)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    fail("usage: coverage.swift <repository root> <symbol graph dir> <modules> <central types>")
}
let root = URL(fileURLWithPath: arguments[1]).standardizedFileURL.path
let graphs = URL(fileURLWithPath: arguments[2])
let modules = arguments[3].split(separator: " ").map(String.init)
let centralTypes = arguments[4].split(separator: " ").map(String.init)

/// A path relative to the repository, from a symbol graph's `file://` URI.
func relative(_ uri: String?) -> String {
    guard let uri, let url = URL(string: uri) else { return "?" }
    let path = url.path
    return path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
}

var sourceLines: [String: [String]] = [:]
/// The lines of a source file (cached); empty when it cannot be read.
func lines(of file: String) -> [String] {
    if let cached = sourceLines[file] { return cached }
    let path = file.hasPrefix("/") ? file : "\(root)/\(file)"
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    let result = text.components(separatedBy: "\n")
    sourceLines[file] = result
    return result
}

/// Whether `symbol` has a doc comment (its own or carried over).
func hasComment(_ symbol: [String: Any]) -> Bool {
    let comment = symbol["docComment"] as? [String: Any]
    let commentLines = comment?["lines"] as? [[String: Any]] ?? []
    return commentLines.contains { !(($0["text"] as? String) ?? "").trimmingCharacters(in: .whitespaces).isEmpty }
}

/// Whether `symbol`'s doc comment is its own: written in its file, right above the
/// declaration, with only attributes (`@inlinable`, `@discardableResult`) in between.
func hasOwnComment(_ symbol: [String: Any]) -> Bool {
    guard hasComment(symbol), let comment = symbol["docComment"] as? [String: Any],
          let commentLines = comment["lines"] as? [[String: Any]]
    else { return false }
    let location = symbol["location"] as? [String: Any]
    guard let uri = comment["uri"] as? String, uri == location?["uri"] as? String,
          let position = location?["position"] as? [String: Any], let declarationLine = position["line"] as? Int,
          let range = commentLines.last?["range"] as? [String: Any], let end = range["end"] as? [String: Any],
          let lastCommentLine = end["line"] as? Int, lastCommentLine < declarationLine
    else { return false }
    let source = lines(of: relative(uri))
    guard declarationLine < source.count else { return false }
    return source[(lastCommentLine + 1)..<declarationLine].allSatisfy {
        $0.trimmingCharacters(in: .whitespaces).hasPrefix("@")
    }
}

var undocumented: [Declaration] = []
var counts: [(module: String, total: Int, missing: Int, carried: Int)] = []
var topicsInComments: [String: (module: String, hasTopics: Bool)] = [:]

for module in modules {
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: graphs.path)) ?? [])
        .filter { $0 == "\(module).symbols.json" || $0.hasPrefix("\(module)@") && $0.hasSuffix(".symbols.json") }
        .sorted()
    guard files.contains("\(module).symbols.json") else { fail("no symbol graph for \(module) in \(graphs.path)") }
    var total = 0
    var missing = 0
    var carried = 0
    for file in files {
        let data = try Data(contentsOf: graphs.appendingPathComponent(file))
        guard let graph = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = graph["symbols"] as? [[String: Any]]
        else { fail("\(file) is not a symbol graph") }
        for symbol in symbols {
            guard let access = symbol["accessLevel"] as? String, access == "public" || access == "open" else { continue }
            let identifier = (symbol["identifier"] as? [String: Any])?["precise"] as? String ?? ""
            if identifier.contains("::SYNTHESIZED::") { continue }
            let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
            let kind = ((symbol["kind"] as? [String: Any])?["identifier"] as? String ?? "?")
                .replacingOccurrences(of: "swift.", with: "")
            let location = symbol["location"] as? [String: Any]
            let line = ((location?["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 } ?? 0
            total += 1
            if hasOwnComment(symbol) {
                // Documented where it is declared.
            } else if hasComment(symbol) {
                carried += 1
            } else {
                missing += 1
                undocumented.append(Declaration(
                    module: module, path: path, kind: kind, file: relative(location?["uri"] as? String), line: line))
            }
            if file == "\(module).symbols.json", centralTypes.contains(path) {
                let commentLines = (symbol["docComment"] as? [String: Any])?["lines"] as? [[String: Any]] ?? []
                let hasTopics = commentLines.contains {
                    ($0["text"] as? String)?.trimmingCharacters(in: .whitespaces) == "## Topics"
                }
                topicsInComments[path] = (module, hasTopics)
            }
        }
    }
    counts.append((module, total, missing, carried))
}

/// Whether the catalog `Modules/<module>/<module>.docc` has an extension file for `type`
/// (first line `# ``<module>/<type>``` or `# ``<type>```) with a `## Topics` section.
func extensionFileHasTopics(module: String, type: String) -> String? {
    let catalog = "\(root)/Modules/\(module)/\(module).docc"
    guard let walker = FileManager.default.enumerator(atPath: catalog) else { return nil }
    for case let file as String in walker where file.hasSuffix(".md") {
        let text = (try? String(contentsOfFile: "\(catalog)/\(file)", encoding: .utf8)) ?? ""
        let fileLines = text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let title = fileLines.first(where: { !$0.isEmpty }),
              title == "# ``\(module)/\(type)``" || title == "# ``\(type)``"
        else { continue }
        if fileLines.contains("## Topics") { return "Modules/\(module)/\(module).docc/\(file)" }
    }
    return nil
}

var status: Int32 = 0
for declaration in undocumented.sorted(by: { ($0.file, $0.line) < ($1.file, $1.line) }) {
    print("\(declaration.file):\(declaration.line): \(declaration.kind) \(declaration.module).\(declaration.path) has no doc comment")
}
var missingTopics: [String] = []
for type in centralTypes {
    guard let found = topicsInComments[type] else {
        print("central type \(type): not found as a public type in \(modules.joined(separator: ", "))")
        missingTopics.append(type)
        continue
    }
    if found.hasTopics || extensionFileHasTopics(module: found.module, type: type) != nil { continue }
    print("central type \(found.module).\(type): no `## Topics` in its doc comment or in an extension file "
        + "`# ``\(found.module)/\(type)``` of Modules/\(found.module)/\(found.module).docc")
    missingTopics.append(type)
}

print("check-doc-coverage: public declarations with a doc comment, per module:")
for count in counts {
    let percent = count.total == 0 ? 100 : Double(count.total - count.missing) * 100 / Double(count.total)
    print("  \(count.module): \(count.total - count.missing) of \(count.total) (\(String(format: "%.1f", percent))%); "
        + "\(count.carried) of them carry the comment of the requirement they implement; \(count.missing) undocumented")
}
print("check-doc-coverage: central types with `## Topics`: \(centralTypes.count - missingTopics.count) of \(centralTypes.count)")
if !undocumented.isEmpty || !missingTopics.isEmpty {
    print("check-doc-coverage: FAILED: \(undocumented.count) undocumented declarations, \(missingTopics.count) central types without topics")
    status = 1
}
exit(status)

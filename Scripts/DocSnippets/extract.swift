// Extracts every ```swift block of README.md, Docs/*.md and the DocC catalogs' articles
// (Modules/<Module>/<Module>.docc) into a throwaway Swift package, one executable target per
// block, so that one `swift build` compiles them all against the repository's products. Run by Scripts/check-doc-snippets.sh; see that script for the rules.
//
//   swift Scripts/DocSnippets/extract.swift <repository root> <output package directory>

import Foundation

struct Block {
    var document: String      // e.g. "Docs/Concurrency.md"
    var line: Int             // line of the opening fence, 1-based
    var code: [String]
    var supplies: String?     // the text of the "(Supplies: …)" line before the block
    var failsOnPurpose: Bool  // "(Does not compile, on purpose …)" before the block
    /// A package manifest (it starts with `// swift-tools-version:`): checked by loading it.
    var isManifest: Bool { code.first { !$0.isEmpty }?.hasPrefix("// swift-tools-version:") == true }
    /// "(Not compiled: <why>)" before the block: code of another framework, shown for comparison.
    var notCompiled: Bool
    var kind: String { notCompiled ? "skipped" : isManifest ? "manifest" : failsOnPurpose ? "fails" : "compiles" }
    var target: String { "\(URL(fileURLWithPath: document).deletingPathExtension().lastPathComponent)_\(line)".replacingOccurrences(of: "-", with: "_") }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-doc-snippets: \(message)\n".utf8))
    exit(1)
}

/// The blocks of one document, with the marker line that precedes each (blank lines skipped).
func blocks(of document: String, root: URL) throws -> [Block] {
    let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
    let lines = text.components(separatedBy: "\n")
    var result: [Block] = []
    var index = 0
    while index < lines.count {
        let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
        guard trimmed == "```swift" else { index += 1; continue }
        let indent = lines[index].prefix { $0 == " " }.count
        // The paragraph right before the block (blank lines between are allowed).
        var previous = index - 1
        while previous >= 0, lines[previous].trimmingCharacters(in: .whitespaces).isEmpty { previous -= 1 }
        var paragraph: [String] = []
        while previous >= 0, !lines[previous].trimmingCharacters(in: .whitespaces).isEmpty {
            paragraph.insert(lines[previous].trimmingCharacters(in: .whitespaces), at: 0)
            previous -= 1
        }
        let marker = paragraph.joined(separator: " ")
        var code: [String] = []
        var end = index + 1
        while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" {
            code.append(String(lines[end].dropFirst(min(indent, lines[end].prefix { $0 == " " }.count))))
            end += 1
        }
        guard end < lines.count else { fail("\(document):\(index + 1): the swift block is not closed") }
        result.append(Block(
            document: document, line: index + 1, code: code,
            supplies: marker.hasPrefix("(Supplies:") || marker.hasPrefix("(Does not compile, on purpose. Supplies:") ? marker : nil,
            failsOnPurpose: marker.hasPrefix("(Does not compile, on purpose"),
            notCompiled: marker.hasPrefix("(Not compiled: ")))
        index = end + 1
    }
    return result
}

/// The declarations a "(Supplies: …)" paragraph stands for: `import Strata`, then each
/// backticked `name: Type` becomes a value of that type, a backticked declaration is used as
/// written, and "the block above" brings in the previous block of the same document (with what
/// it is supplied).
func prelude(for block: Block, previous: [Block]) -> [String] {
    guard let supplies = block.supplies else { return [] }
    var out = ["import Strata"]
    if supplies.contains("the block above") {
        guard let above = previous.last else { fail("\(block.document):\(block.line): \"the block above\" but there is none") }
        out += prelude(for: above, previous: Array(previous.dropLast())) + above.code
    }
    let parts = supplies.components(separatedBy: "`")
    let declarationKeywords = ["import ", "struct ", "enum ", "final class ", "class ", "func ", "extension ", "typealias ", "let ", "var ", "protocol "]
    for (position, part) in parts.enumerated() where position % 2 == 1 {
        if declarationKeywords.contains(where: part.hasPrefix) {
            out.append(part)
        } else if let colon = part.firstIndex(of: ":"), isIdentifier(part[..<colon].trimmingCharacters(in: .whitespaces)) {
            let name = part[..<colon].trimmingCharacters(in: .whitespaces)
            let type = part[part.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            out.append("let \(name): \(type) = supplied()")
        }
        // Other backticked words are prose (a type or a method name).
    }
    return out
}

/// Whether `text` is a plain Swift identifier (`context`, `accountID`).
func isIdentifier(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first) else { return false }
    return text.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: extract.swift <repository root> <output package directory>") }
let root = URL(fileURLWithPath: arguments[1]).standardizedFileURL
let output = URL(fileURLWithPath: arguments[2]).standardizedFileURL
let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Docs").path)
    .filter { $0.hasSuffix(".md") }.sorted().map { "Docs/\($0)" }

/// The articles of each DocC catalog `Modules/<Module>/<Module>.docc`, and the modules they
/// document. A catalog whose module has no Swift sources yet (made ahead of it) is left out.
func catalogArticles() -> (modules: [String], articles: [String]) {
    let files = FileManager.default
    let modulesPath = root.appendingPathComponent("Modules").path
    var modules: [String] = []
    var articles: [String] = []
    for module in ((try? files.contentsOfDirectory(atPath: modulesPath)) ?? []).sorted() {
        let catalog = "Modules/\(module)/\(module).docc"
        let inModule = files.enumerator(atPath: "\(modulesPath)/\(module)")?.compactMap { $0 as? String } ?? []
        // corelibs Foundation enumerates a missing directory as empty: check that the catalog exists.
        guard files.fileExists(atPath: root.appendingPathComponent(catalog).path),
              inModule.contains(where: { $0.hasSuffix(".swift") && !$0.hasPrefix("\(module).docc/") }),
              let inCatalog = files.enumerator(atPath: root.appendingPathComponent(catalog).path) else { continue }
        modules.append(module)
        articles += inCatalog.compactMap { $0 as? String }.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
    }
    return (modules, articles)
}
let catalogs = catalogArticles()

var all: [Block] = []
for document in ["README.md"] + docs + catalogs.articles {
    var done: [Block] = []
    for block in try blocks(of: document, root: root) {
        var block = block
        let extra = prelude(for: block, previous: done)
        done.append(block)
        block.code = extra.isEmpty ? block.code : extra + ["", "// ---- \(block.document):\(block.line) as shown ----"] + block.code
        all.append(block)
    }
}

let sources = output.appendingPathComponent("Sources")
let manifests = output.appendingPathComponent("Manifests")
try? FileManager.default.removeItem(at: sources)
try? FileManager.default.removeItem(at: manifests)
for block in all where block.isManifest {
    let directory = manifests.appendingPathComponent(block.target)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try (block.code.joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
}
for block in all where block.kind == "compiles" || block.kind == "fails" {
    let directory = sources.appendingPathComponent(block.target)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try (block.code.joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
    if block.supplies != nil {
        try """
        /// Stands for a value the reader supplies (see the "(Supplies: …)" line before the block).
        /// The snippets are only compiled, never run.
        func supplied<T>() -> T { fatalError("supplied by the reader") }

        """.write(to: directory.appendingPathComponent("Supplied.swift"), atomically: true, encoding: .utf8)
    }
}

// The package: every block is an executable target that can import every library product.
// Blocks that do not compile on purpose are included only when SNIPPETS_FAILING=1 is set, so
// that the first build compiles everything else.
let identity = root.lastPathComponent.lowercased()
let libraryProducts = ["Strata", "StrataStorage", "StrataSQLite", "StrataLMDB", "StrataPostgres", "StrataMemory", "StrataConformance", "StrataTestSupport", "Ledger"]
// A catalog's module is a library product too (StrataStorage, the engine interface).
let products = libraryProducts + catalogs.modules.filter { !libraryProducts.contains($0) }
func targetLine(_ block: Block) -> String {
    "    .executableTarget(name: \"\(block.target)\", dependencies: products, path: \"Sources/\(block.target)\"),"
}
let manifest = """
// swift-tools-version:6.0
// Generated by Scripts/DocSnippets/extract.swift: every swift block of README.md and Docs/*.md.
import Foundation
import PackageDescription

let products: [Target.Dependency] = [
\(products.map { "    .product(name: \"\($0)\", package: \"\(identity)\")," }.joined(separator: "\n"))
]
var targets: [Target] = [
\(all.filter { $0.kind == "compiles" }.map(targetLine).joined(separator: "\n"))
]
if ProcessInfo.processInfo.environment["SNIPPETS_FAILING"] == "1" {
    targets += [
    \(all.filter { $0.kind == "fails" }.map(targetLine).joined(separator: "\n    "))
    ]
}
let package = Package(
    name: "DocSnippets",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: \(String(reflecting: root.path)))],
    targets: targets,
    swiftLanguageModes: [.v6]
)

"""
try manifest.write(to: output.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)

// The list the shell script reads: target, "compiles", "fails" or "manifest", where the block is.
let list = all.map { "\($0.target) \($0.kind) \($0.document):\($0.line)" }.joined(separator: "\n")
try (list + "\n").write(to: output.appendingPathComponent("snippets.txt"), atomically: true, encoding: .utf8)

/// The command line, split into global options, command options and positional words.
struct CLIArguments {
    var engine = "sqlite"
    var store: String?
    /// The PostgreSQL schema of the store (`--schema`); nil for the default, ``defaultSchema``.
    var schema: String?
    var help = false
    /// Values of command options such as `--currency EUR`.
    var options: [String: String] = [:]
    /// Command flags such as `--no-overdraft`.
    var flags: Set<String> = []
    /// The command and its arguments, in order.
    var words: [String] = []

    static let valueOptions: Set<String> = [
        "--engine", "--store", "--schema", "--currency", "--opening", "--category", "--after", "--month", "--before",
    ]
    static let flagOptions: Set<String> = ["--no-overdraft", "--from-start"]

    /// Parses `arguments` (without the program name).
    /// - Throws: ``CLIError/usage(_:)`` for an unknown option or a missing value.
    init(_ arguments: [String]) throws(CLIError) {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if word == "-h" || word == "--help" {
                help = true
            } else if Self.valueOptions.contains(word) {
                guard index < arguments.count else { throw .usage("\(word) needs a value") }
                let value = arguments[index]
                index += 1
                switch word {
                case "--engine": engine = value
                case "--store": store = value
                case "--schema": schema = value
                default: options[word] = value
                }
            } else if Self.flagOptions.contains(word) {
                flags.insert(word)
            } else if word.hasPrefix("--") || (word.hasPrefix("-") && !Self.looksNumeric(word)) {
                throw .usage("unknown option \(word)")
            } else {
                words.append(word)
            }
        }
        guard ["sqlite", "lmdb", "postgres"].contains(engine) else {
            throw .usage(
                "unknown engine \(String(reflecting: engine)); use --engine sqlite, --engine lmdb or --engine postgres")
        }
        if schema != nil && engine != "postgres" {
            throw .usage("--schema names a PostgreSQL schema; it needs --engine postgres")
        }
        if engine == "postgres" && store == nil && !help && words != ["help"] {
            throw .usage(
                "--engine postgres needs --store with the server's URL, such as postgresql://user@host:5432/database")
        }
    }

    /// The schema a PostgreSQL ledger lives in when `--schema` is not given.
    static let defaultSchema = "ledger"

    /// `-12.50` is an amount, not an option.
    private static func looksNumeric(_ word: String) -> Bool {
        word.dropFirst().first.map { $0.isNumber || $0 == "." } ?? false
    }

    /// The value of a command option that the command needs.
    /// - Throws: ``CLIError/usage(_:)`` naming the expected form when it is missing.
    func required(_ option: String, form: String) throws(CLIError) -> String {
        guard let value = options[option] else { throw .usage("\(option) is needed; expected: ledger \(form)") }
        return value
    }

    /// The positional words after the command, checked against a count range.
    /// - Throws: ``CLIError/usage(_:)`` naming the expected form.
    func operands(after commandWords: Int, count: ClosedRange<Int>, form: String) throws(CLIError) -> [String] {
        let operands = Array(words.dropFirst(commandWords))
        guard count.contains(operands.count) else { throw .usage("expected: ledger \(form)") }
        return operands
    }
}

/// Errors of the command line itself (as opposed to ledger errors).
enum CLIError: Error, CustomStringConvertible {
    /// The arguments do not form a command.
    case usage(String)
    /// The store does not exist for a command that needs one.
    case noStore(path: String)
    /// An argument names nothing usable (an unknown account name…), already worded.
    case badInput(String)

    var description: String {
        switch self {
        case .usage(let detail): "\(detail). Run `swift run ledger --help` for usage."
        case .noStore(let path):
            """
            No ledger store at \(path). Create it with `swift run ledger init`, or pass --store PATH (and \
            --engine) of an existing one.
            """
        case .badInput(let text): text
        }
    }
}

/// The arguments of `copy FROM TO` and `backup STORE DEST`: two places, `--json`, `--batch-rows N`.
struct CopyOptions {
    var stores: [String] = []
    var json = false
    var batchRows = 2000

    init(_ arguments: [String], command: String) throws(ToolError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json": json = true
            case "--batch-rows":
                guard let value = remaining.popFirst(), let rows = Int(value), rows > 0 else {
                    throw .usage("--batch-rows needs a number of rows above 0")
                }
                batchRows = rows
            default:
                if argument.hasPrefix("-") { throw .usage("unknown option \(argument) of \(command)") }
                stores.append(argument)
            }
        }
        guard stores.count == 2 else {
            throw .usage(
                command == "copy"
                    ? "copy takes FROM and TO, got \(stores.count) argument(s)"
                    : "backup takes STORE and DEST, got \(stores.count) argument(s)")
        }
    }
}

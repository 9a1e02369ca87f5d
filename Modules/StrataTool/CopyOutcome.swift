import StrataStorage

/// What `strata copy` did: the target's verified counts and checksums, and what it did not copy.
/// Encoded as is for `--json`.
struct CopyOutcome: Codable, Sendable, Equatable {
    var source: String
    var target: String
    /// The identifier both stores now carry, so object URIs name the same objects in both.
    var storeIdentifier: String
    /// The target's counts and checksums, equal to the source snapshot's.
    var digest: StoreDigest
    /// The source's history transactions, which the copy does not carry over.
    var historyTransactionsNotCopied: Int
    /// The source's history cursors, which the copy does not carry over.
    var cursorsNotCopied: [String]

    /// The outcome as lines for a person.
    var text: String {
        var lines = ["copied \(source) to \(target): identifier \(storeIdentifier), key counters kept"]
        for part in digest.entities {
            lines.append("entity \(part.name): \(part.count) rows, checksum \(part.checksum) on both sides")
        }
        for part in digest.joins {
            lines.append("join \(part.name): \(part.count) links, checksum \(part.checksum) on both sides")
        }
        let cursors = cursorsNotCopied.isEmpty ? "" : " and cursors " + cursorsNotCopied.joined(separator: ", ")
        lines.append(
            """
            not copied: the history (\(historyTransactionsNotCopied) transaction\
            \(historyTransactionsNotCopied == 1 ? "" : "s"))\(cursors); the target's history starts empty and \
            every row at version 1
            """)
        return lines.joined(separator: "\n")
    }
}

/// What the source has that a copy leaves behind: its history and its cursors.
struct NotCopied {
    var transactions = 0
    var cursors: [String] = []

    init(_ store: OpenedStore) throws {
        transactions = try store.inspection.readHistorySummary().transactions
        cursors = try store.engine.historyCursors().keys.sorted()
    }
}

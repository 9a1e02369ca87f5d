import CrashModels
import Strata

/// Replays a crash store's persistent history, transaction by transaction, and checks it against
/// the store's data: the history must describe exactly the saves that committed.
///
/// While replaying: tokens go 1, 2, 3, … with no gap; an insert is of a key not alive, an update
/// or a delete of a key alive; each transaction is the writer's setup (ten account inserts) or a
/// transfer `transfer N`, N = 2, 4, 6, … in order, shaped as the writer saves it (two entry
/// inserts, a memo insert, two account updates of `balance`, the previous memo's update, the
/// expired memo's delete with its sequence in the tombstone). Against the data: per entity, the
/// keys inserted minus the keys deleted are exactly the stored keys; each stored entry and memo
/// was inserted by the transfer its sequence names; the transfers replayed are exactly those the
/// entries record, which include every acknowledged one.
struct CrashHistoryReplay {
    /// The last token replayed (0 before the first).
    private(set) var token: Int64 = 0
    /// The keys alive after the transactions replayed, by entity name.
    private var live: [String: Set<Int64>] = [:]
    /// The transfer sequence that inserted each entry and memo key, by entity name.
    private var insertedBy: [String: [Int64: Int64]] = [:]
    /// The last transfer replayed (0 before the first).
    private(set) var lastTransfer: Int64 = 0
    /// Whether the accounts' opening save was replayed.
    private var setUp = false

    /// Replays `transactions`, the next ones after ``token``, and lists what breaks the rules.
    mutating func replay(_ transactions: [PersistentHistoryTransaction]) -> [String] {
        var problems: [String] = []
        for transaction in transactions {
            let number = transaction.token.rawValue
            let label = "history \(number) (\(transaction.author ?? "no author"))"
            if number != token + 1 { problems.append("\(label) follows token \(token): a gap or a disorder") }
            token = number
            problems += apply(transaction.changes).map { "\(label): \($0)" }
            problems += checkShape(transaction).map { "\(label): \($0)" }
        }
        return problems
    }

    /// Applies the changes to the live keys.
    private mutating func apply(_ changes: [PersistentHistoryChange]) -> [String] {
        var problems: [String] = []
        for change in changes {
            let entity = change.objectID.entityName
            guard let key = change.objectID.primaryKey else {
                problems.append("a change of a temporary ID \(change.objectID)")
                continue
            }
            switch change.kind {
            case .insert:
                if !live[entity, default: []].insert(key).inserted {
                    problems.append("inserts \(entity) \(key), which is already alive")
                }
            case .update:
                if live[entity]?.contains(key) != true {
                    problems.append("updates \(entity) \(key), which was never inserted or is already deleted")
                }
            case .delete:
                if live[entity]?.remove(key) == nil {
                    problems.append("deletes \(entity) \(key), which was never inserted or is already deleted")
                }
            }
        }
        return problems
    }

    /// Checks that the transaction is one of the writer's saves, shaped as the writer makes it.
    private mutating func checkShape(_ transaction: PersistentHistoryTransaction) -> [String] {
        let counts = Dictionary(
            transaction.changes.map { ("\($0.objectID.entityName) \($0.kind.rawValue)", 1) }, uniquingKeysWith: +)
        if transaction.author == CrashModel.setupAuthor {
            defer { setUp = true }
            let expected = ["Account insert": CrashModel.accountCount]
            let repeated = setUp ? ["the accounts were opened twice"] : []
            return repeated + (counts == expected ? [] : ["changes \(counts), expected \(expected)"])
        }
        let prefix = CrashModel.transferAuthor(0).dropLast()
        guard let author = transaction.author, author.hasPrefix(prefix),
            let sequence = Int64(author.dropFirst(prefix.count))
        else { return ["not a save of the writer"] }
        var problems: [String] = []
        if !setUp { problems.append("a transfer before the accounts were opened") }
        if sequence != lastTransfer + 2 { problems.append("follows transfer \(lastTransfer)") }
        lastTransfer = sequence
        let window = CrashModel.memoWindow
        var expected = ["Entry insert": 2, "Memo insert": 1, "Account update": 2]
        if sequence > 2 { expected["Memo update"] = 1 }
        if sequence > 2 * window { expected["Memo delete"] = 1 }
        if counts != expected { problems.append("changes \(counts), expected \(expected)") }
        for change in transaction.changes {
            let entity = change.objectID.entityName
            let key = change.objectID.primaryKey ?? 0
            switch (entity, change.kind) {
            case ("Entry", .insert), ("Memo", .insert):
                insertedBy[entity, default: [:]][key] = sequence
            case ("Account", .update) where !change.changedProperties.contains("balance"):
                problems.append("updates account \(key) without its balance: \(change.changedProperties)")
            case ("Memo", .update) where insertedBy["Memo"]?[key] != sequence - 2:
                problems.append("updates memo \(key), not the previous transfer's")
            case ("Memo", .update) where change.changedProperties != ["followedBy"]:
                problems.append("updates memo \(key)'s \(change.changedProperties), not followedBy")
            case ("Memo", .delete):
                let kept = change.tombstoneValue("sequence", as: Int64.self)
                if kept != sequence - 2 * window || insertedBy["Memo"]?[key] != sequence - 2 * window {
                    problems.append(
                        "deletes memo \(key) (tombstone sequence \(kept.map(String.init) ?? "none")), "
                            + "not transfer \(sequence - 2 * window)'s")
                }
            default: break
            }
        }
        return problems
    }

    /// Lists where the replayed history and the data `snapshot` disagree. `acknowledged` is the
    /// highest transfer sequence a writer acknowledged so far.
    func problems(against snapshot: CrashStoreSnapshot, acknowledged: Int64) -> [String] {
        var problems: [String] = []
        for entity in CrashStoreSnapshot.entityNames {
            let replayed = live[entity] ?? []
            let stored = snapshot.keys(of: entity)
            guard replayed != stored else { continue }
            let missing = replayed.subtracting(stored).sorted().prefix(5)
            let extra = stored.subtracting(replayed).sorted().prefix(5)
            problems.append(
                "history replays to \(replayed.count) \(entity) keys, the store holds \(stored.count) "
                    + "(alive in history only: \(Array(missing)), stored only: \(Array(extra)))")
        }
        for (key, sequence) in snapshot.entries where insertedBy["Entry"]?[key] != sequence + sequence % 2 {
            problems.append("entry \(key) (sequence \(sequence)) was not inserted by its transfer in the history")
        }
        for (key, memo) in snapshot.memos where insertedBy["Memo"]?[key] != memo.sequence {
            problems.append("memo \(key) (sequence \(memo.sequence)) was not inserted by its transfer in the history")
        }
        let highest = snapshot.entries.values.max() ?? 0
        if lastTransfer != highest {
            problems.append("the history's last transfer is \(lastTransfer), the entries' \(highest)")
        }
        if lastTransfer < acknowledged {
            problems.append("lost: transfer \(acknowledged) was acknowledged, the history ends at \(lastTransfer)")
        }
        if setUp != !snapshot.accounts.isEmpty {
            problems.append("the accounts' opening save is \(setUp ? "" : "not ")in the history")
        }
        return problems
    }
}

import CrashModels
import Strata

/// What a crash store holds, by primary key, read in one context once the writer is dead: the
/// data the crash test checks its invariants and the replayed history against.
struct CrashStoreSnapshot: Sendable {
    /// An account's balance and the sum of its entries' amounts.
    struct Account: Sendable {
        let balance: Int64
        let entrySum: Int64
    }

    /// A memo's sequence and the sequence of the transfer that followed it (0 for none yet).
    struct Memo: Sendable, Equatable {
        let sequence: Int64
        let followedBy: Int64
    }

    /// The accounts by key.
    var accounts: [Int64: Account] = [:]
    /// Each entry's sequence, by key: the entries reached through the accounts.
    var entries: [Int64: Int64] = [:]
    /// How many entries the store holds (counted, not fetched): more than ``entries`` when some
    /// belong to no account.
    var entryCount = 0
    /// The memos by key.
    var memos: [Int64: Memo] = [:]

    /// The keys stored for the entity named `entity` (the crash model's entity names).
    func keys(of entity: String) -> Set<Int64> {
        switch entity {
        case "Account": Set(accounts.keys)
        case "Entry": Set(entries.keys)
        case "Memo": Set(memos.keys)
        default: []
        }
    }

    /// The entity names of the crash model.
    static let entityNames = ["Account", "Entry", "Memo"]

    /// Reads every account, entry and memo of `container`'s store.
    static func read(_ container: PersistentContainer) async throws -> CrashStoreSnapshot {
        let context = container.newBackgroundContext()
        return try await context.perform {
            var snapshot = CrashStoreSnapshot()
            // Entries through their accounts only, then counted: fetching them all again would
            // double the check's main cost, which grows with the store, kill after kill.
            for account in try context.fetch(FetchRequest<CrashAccount>()) {
                var sum: Int64 = 0
                for entry in account.entries {
                    sum += entry.amount
                    snapshot.entries[entry.objectID.primaryKey ?? 0] = entry.sequence
                }
                snapshot.accounts[account.objectID.primaryKey ?? 0] = Account(balance: account.balance, entrySum: sum)
            }
            snapshot.entryCount = try context.count(for: FetchRequest<CrashEntry>())
            for memo in try context.fetch(FetchRequest<CrashMemo>()) {
                snapshot.memos[memo.objectID.primaryKey ?? 0] = Memo(
                    sequence: memo.sequence, followedBy: memo.followedBy)
            }
            return snapshot
        }
    }

    /// The data's own invariants beyond the entries' (checked by the crash test): memos exist for
    /// exactly the last ``CrashModel/memoWindow`` transfers up to the entries' highest sequence
    /// `highest`, each followed by the next but the newest.
    func memoProblems(highest: Int64) -> [String] {
        let window = CrashModel.memoWindow
        let expected = stride(from: highest, to: max(0, highest - 2 * window), by: -2).map {
            Memo(sequence: $0, followedBy: $0 == highest ? 0 : $0 + 2)
        }
        let stored = memos.values.sorted { $0.sequence > $1.sequence }
        guard stored != expected else { return [] }
        return ["memos \(stored) are not those of the last transfers up to \(highest): \(expected)"]
    }
}

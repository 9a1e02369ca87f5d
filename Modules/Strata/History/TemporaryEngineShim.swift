import StrataStorage

// TEMPORARY until wp-i15-eng merges (delete then).
extension HistoryStore {
    func historyCursors() throws -> [String: Int64] { [:] }
    func setHistoryCursor(_ name: String, to token: Int64?) throws {}
    func deleteHistory(before token: Int64, force: Bool) throws -> Int64 {
        try deleteHistory(before: token)
        return token
    }
}

/// The names the engine makes from a table's name for the objects that belong to it (a table's
/// primary key, a join's reverse index), kept within PostgreSQL's 63 bytes: the model's own names
/// may take all 63 (the core's rule), so `<name>_pkey` could be longer.
enum PostgresDerivedName {
    /// `<table>_pkey`, the primary key constraint (and its index) of an entity's or join's table.
    static func primaryKey(of table: String) -> String { make(table, suffix: "pkey") }

    /// `<join>_right`, the index of a join table by its right side.
    static func rightIndex(of join: String) -> String { make(join, suffix: "right") }

    /// `<base>_<suffix>` when it fits in 63 bytes; else `base` cut to fit with eight hex digits of
    /// a hash of the whole of it (`<cut>_<hash>_<suffix>`), so two long names never share one.
    static func make(_ base: String, suffix: String) -> String {
        let whole = base + "_" + suffix
        guard whole.utf8.count > 63 else { return whole }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 // FNV-1a, stable across processes and versions
        for byte in base.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let tail = "_" + String(UInt32(truncatingIfNeeded: hash ^ (hash >> 32)), radix: 16) + "_" + suffix
        var cut = ""
        for scalar in base.unicodeScalars {
            guard cut.utf8.count + String(scalar).utf8.count + tail.utf8.count <= 63 else { break }
            cut.unicodeScalars.append(scalar)
        }
        return cut + tail
    }
}

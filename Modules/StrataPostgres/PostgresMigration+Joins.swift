import StrataStorage

/// The join steps that keep links: a join renamed with its entities, and its sides swapped.
extension PostgresMigration {
    /// The name a join table has while its sides are swapped.
    static let swappingJoin = "strata_swapping_join"

    /// Renames a join table and its primary key and `_right` index, keeping its links.
    func renameJoin(from: String, to: String) throws(StrataError) {
        try session.run("ALTER TABLE \(qualified(from)) RENAME TO \(pgQuoted(to))")
        try renameIndex(PostgresDerivedName.primaryKey(of: from), to: PostgresDerivedName.primaryKey(of: to))
        try renameIndex(PostgresDerivedName.rightIndex(of: from), to: PostgresDerivedName.rightIndex(of: to))
    }

    /// Remakes a join with its sides swapped: every (left, right) link becomes (right, left).
    ///
    /// Not an in-place `UPDATE`: the primary key is checked row by row, so swapping (1, 2) and
    /// (2, 1) would clash half-way. The old table is set aside (its key and index dropped, so the
    /// model's names are free), the join created as the model declares it, the links copied.
    func swapJoinSides(_ name: String, progress: MigrationRowProgress) throws(StrataError) {
        let layout = try join(name)
        let old = qualified(Self.swappingJoin)
        if try session.run("SELECT to_regclass($1)", [.rawText(old)]).isNull(0, 0) == false {
            throw .misuse(
                """
                \(session.store): the sides of join \(name) cannot be swapped: the store already has a table named \
                \(Self.swappingJoin); drop or rename it, then open again
                """)
        }
        try session.run("ALTER TABLE \(qualified(name)) RENAME TO \(pgQuoted(Self.swappingJoin))")
        try session.run("ALTER TABLE \(old) DROP CONSTRAINT \(pgQuoted(PostgresDerivedName.primaryKey(of: name)))")
        try session.run("DROP INDEX \(qualified(PostgresDerivedName.rightIndex(of: name)))")
        for statement in layout.create() { try session.run(statement) }
        let copied = try session.run(
            "INSERT INTO \(layout.table) (\"left\", \"right\") SELECT \"right\", \"left\" FROM \(old)")
        progress.rowsMigrated(copied.affectedRows, of: copied.affectedRows)
        try session.run("DROP TABLE \(old)")
    }
}

import StrataStorage

/// The naming rules every engine can keep, checked when a ``Schema`` is made, so a model that
/// opens on one engine opens on every engine: SQLite ignores case in table, index and column
/// names, PostgreSQL keeps 63 bytes of a name, and every engine keeps a few tables of its own.
extension Schema {
    /// The longest entity, attribute, relationship, index or join name, in bytes (PostgreSQL's
    /// limit on an identifier).
    static let longestName = 63

    /// Table names the engines keep for themselves.
    static let reservedTableNames: Set<String> = [
        "strata_metadata", "strata_key_counters", "strata_history", "strata_history_cursors", "strata_history_clock",
        "strata_commits",
    ]

    /// Checks the names of `entities` and `joins` against the rules every engine keeps.
    /// - Throws: `.invalidSchema` naming the first name that breaks one, and what to change.
    static func checkPortableNames(_ entities: [EntitySchema], _ joins: [JoinSchema]) throws(StrataError) {
        // Entities, indexes and joins share one namespace (SQLite's tables and indexes).
        var claimed: [String: String] = [:]
        func claim(_ name: String, _ what: String) throws(StrataError) {
            try checkLength(name, what)
            let folded = name.lowercased()
            guard !reservedTableNames.contains(folded), !folded.hasPrefix("sqlite_") else {
                throw .invalidSchema("\(what) is a name an engine keeps for itself; choose another name")
            }
            if let other = claimed[folded] { throw caseClash(what, other, rename: "one") }
            claimed[folded] = what
        }
        for entity in entities {
            try claim(entity.name, "entity \(entity.name)")
            var columns: [String: String] = ["id": "the primary key id", "version": "the version column"]
            for column in entity.columns {
                let what = "\(entity.name).\(column.name)"
                try checkLength(column.name, what)
                if let other = columns[column.name.lowercased()] { throw caseClash(what, other, rename: "it") }
                columns[column.name.lowercased()] = "\(entity.name).\(column.name)"
            }
            for index in entity.indexes {
                let attributes = index.columns.map { entity.columns[$0].name }.joined(separator: ", ")
                try claim(index.name, "index \(index.name) (of \(entity.name): \(attributes))")
            }
        }
        for join in joins {
            try claim(join.name, "join table \(join.name) (of a many-to-many relationship)")
        }
    }

    /// The error for two names that differ only in case.
    private static func caseClash(_ what: String, _ other: String, rename: String) -> StrataError {
        .invalidSchema(
            """
            \(what) and \(other) differ only in case, and SQLite ignores case in names; rename \(rename) so that \
            every engine can store both
            """)
    }

    /// Refuses a name longer than ``longestName``.
    private static func checkLength(_ name: String, _ what: String) throws(StrataError) {
        let bytes = name.utf8.count
        guard bytes <= longestName else {
            throw .invalidSchema(
                """
                \(what): the name has \(bytes) bytes, and PostgreSQL keeps \(longestName); shorten the entity or \
                property name (index and join names are made from them)
                """)
        }
    }
}

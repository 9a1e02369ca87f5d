/// The `--help` text of each command.
enum ToolHelp {
    static let stores = """
        STORE names the engine and the store:
          sqlite:PATH                          a SQLite store file
          lmdb:PATH                            an LMDB store directory
          postgres://USER@HOST/DB?schema=NAME  a PostgreSQL store: libpq's URL plus the store's schema
                                               (postgresql:// too; keep the password in PGPASSWORD)
        """

    static let exitStatuses = """
        Exit status: 0 done (verify: sound), 1 verify found problems, 2 bad arguments, 3 unknown scheme,
        4 no store there, 5 login refused, 6 not a Strata store, 7 in-memory store, 8 unusable recorded
        schema, 9 any other failure of the store.
        """

    static let main = """
        strata: look after a Strata store from its recorded schema, with no model classes.

        Usage: strata COMMAND [OPTIONS]

        Commands:
          inspect STORE [--json]               engine, schema, row counts, history and cursors
          verify STORE [--json]                the engine's integrity check and Strata's own checks
          history prune STORE --before TOKEN|DATE [--force]
                                               delete old history, respecting cursors unless forced

        `strata COMMAND --help` describes a command. Only `history prune` writes to a store, and no
        command creates one.

        \(stores)

        \(exitStatuses)
        """

    static let inspect = """
        Usage: strata inspect STORE [--json]

        Prints the store's engine, identifier and schema version; each recorded entity with its
        attributes, relationships, indexes and row count; the joins; the history's size, oldest and
        current token; and each history cursor with how many tokens it is behind. --json prints the
        same as one JSON object. Writes nothing.

        \(stores)
        """

    static let verify = """
        Usage: strata verify STORE [--json]

        Runs the engine's own integrity check (SQLite: PRAGMA integrity_check; LMDB: a walk of every
        database against its statistics; PostgreSQL: the catalog's invalid indexes and unvalidated
        constraints), then Strata's: every row decodes and fits its column, every to-one key names an
        existing row, every many-to-many link names existing rows from both ends, every unique index
        holds, and the history's tokens and cursors are consistent. Lists every problem; exits 0 only
        when there is none, 1 otherwise. Writes nothing.

        \(stores)
        """

    static let history = """
        Usage: strata history prune STORE --before TOKEN|DATE [--force]

        Deletes the history transactions before TOKEN, or before the first one committed at or after
        DATE (2024-03-01 or 2024-03-01T12:00:00Z). A history cursor that has not processed a
        transaction keeps it, unless --force is given. Prints what it removed and where the history
        now starts.

        \(stores)
        """
}

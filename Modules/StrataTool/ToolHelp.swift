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
        schema, 9 any other failure of the store, 10 the copy's target or backup's DEST is not empty,
        11 the target is a copy that did not finish, 12 the copy does not match its source.
        """

    static let main = """
        strata: look after a Strata store from its recorded schema, with no model classes.

        Usage: strata COMMAND [OPTIONS]

        Commands:
          inspect STORE [--json]               engine, schema, row counts, history and cursors
          verify STORE [--json]                the engine's integrity check and Strata's own checks
          history prune STORE --before TOKEN|DATE [--force]
                                               delete old history, respecting cursors unless forced
          backup STORE DEST [--json]           an online, consistent backup at a new path DEST
          copy FROM TO [--json] [--batch-rows N]
                                               copy a store into a new store of any engine, verified

        `strata COMMAND --help` describes a command. Only `history prune` writes to an existing store;
        `copy` and `backup` create a new one and refuse a target that is not empty.

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

    static let backup = """
        Usage: strata backup STORE DEST [--json]

        Writes a consistent backup of STORE to DEST, a path where nothing is, while other processes
        keep writing: SQLite with VACUUM INTO (DEST is a SQLite store file), LMDB with a compacting
        copy (mdb_env_copy2, MDB_CP_COMPACT; DEST is an LMDB store directory). Both keep everything,
        history included, and appear at DEST whole or not at all. A PostgreSQL store is copied into a
        new SQLite store file at DEST, as `strata copy STORE sqlite:DEST` does (without the history;
        pg_dump --schema=NAME keeps it). Never writes to STORE.

        \(stores)
        """

    static let copy = """
        Usage: strata copy FROM TO [--json] [--batch-rows N]

        Copies the store FROM into a new store TO of any engine, from one snapshot of FROM while other
        processes keep writing: every row with its primary key and every many-to-many link, in batches
        of N rows (2000), so memory stays bounded. TO takes FROM's identifier and key counters, so an
        object URI saved before the copy names the same object in TO, and new objects get new keys.
        The history and its cursors are not copied (TO's history starts empty) and rows start at
        version 1. Before it reports success it compares each entity's row count and checksum, and
        each join's, read back from TO with those read from FROM. Progress goes to standard error
        when it is a terminal. Never writes to FROM.

        TO must be empty: no file at a SQLite path, no store in an LMDB directory, no table in a
        PostgreSQL schema (exit status 10). A copy that was interrupted leaves TO marked unfinished
        (the history cursor strata-copy-unfinished); copying into it again is refused with exit
        status 11 until it is removed.

        \(stores)
        """
}

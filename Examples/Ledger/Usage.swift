/// The `--help` text.
enum Usage {
    static let text = """
        ledger: accounts and transactions in a Strata store, through the Ledger module's services.

        USAGE
          swift run ledger [--engine sqlite|lmdb|postgres] [--store PATH|URL] [--schema NAME] <command> [arguments]

        OPTIONS
          --engine sqlite|lmdb|postgres
                                 storage engine (default: sqlite)
          --store PATH|URL       the store: a file for sqlite, a directory for lmdb
                                 (default: ./ledger.sqlite or ./ledger.lmdb; demo: a new temporary store);
                                 for postgres, the server's URL (required), e.g.
                                 postgresql://app@db.internal:5432/books; keep the password out of it:
                                 libpq reads PGPASSWORD or ~/.pgpass
          --schema NAME          postgres only: the schema that holds the ledger (default: ledger);
                                 init and demo create it, every other command needs it to exist
          -h, --help             show this help

        COMMANDS
          init                                     create the store if needed and show where it is
          account add NAME [--currency USD] [--opening AMOUNT] [--no-overdraft]
                                                   open an account
          account list                             list accounts with balances and URIs
          account show ACCOUNT                     one account, with its history
          add ACCOUNT AMOUNT [NOTE] [--category CATEGORY]
                                                   add a transaction; negative AMOUNT takes money out;
                                                   the category defaults to the one the note suggests
          move TRANSACTION ACCOUNT                 move a transaction to another account
          transfer FROM TO AMOUNT [NOTE]           move money between two accounts, atomically
          history ACCOUNT                          an account's transactions, newest first
          import FILE.csv                          add or update transactions from a CSV file, keyed
                                                   on its external ids; all lines or none (see below)
          report --month YYYY-MM                   the month's transactions summed by category and
                                                   account
          purge --before YYYY-MM-DD                delete the transactions dated before the day (and
                                                   their import lines); each account's balance stays,
                                                   its opening balance takes the purged amounts;
                                                   a later import skips their lines
          watch [--from-start | --after TOKEN]     print each change as it is committed, by this or
                                                   any other process (account, amount, new balance),
                                                   until Ctrl-C; by default from now on
          demo                                     seed accounts, move a transaction, print the balances

        ACCOUNT is an account URI as printed by `account list` (strata://…/Account/p1) or an
        exact account name. TRANSACTION is a transaction URI as printed by `history`.
        AMOUNT is a decimal with up to two digits after the point, such as 12.50 or -3; it is
        stored as integer minor units (cents).

        IMPORT FILES are CSV with this header line and six columns:
          external_id,account,date,amount,category,note
        external_id is the transaction's id in the source (required, once per file; a known id
        updates that transaction instead of adding one), account an existing account's exact name,
        date YYYY-MM-DD (UTC), amount like AMOUNT above and not zero, category optional (empty: the
        one the note suggests), note optional. Quote a field holding a comma: "Dinner, Paris"
        (a quote inside a quoted field is ""). A bad line is reported with its number and nothing
        is imported. Imports of 500 lines or more show a progress line on standard error.

        A store written by an older ledger (version 1, 2 or 3) is migrated when it is opened, with
        a progress line on standard error.

        Progress lines are rewritten in place on a terminal; into a file or a pipe, one line per
        tenth is written instead. LEDGER_PROGRESS=inplace or LEDGER_PROGRESS=lines chooses.

        EXIT STATUS
          0 success, 64 bad usage, 65 refused by the ledger (bad amount or URI, unknown
          account, insufficient funds, amounts that add up to more than the ledger holds in a
          report or purge…), 1 any other failure (store missing or unreadable).

        EXAMPLES
          swift run ledger demo
          swift run ledger --engine lmdb --store /tmp/books demo
          swift run ledger --engine postgres --store postgresql://app@localhost/books init
          swift run ledger init
          swift run ledger account add Checking --opening 1500
          swift run ledger add Checking -12.50 "Lunch"
          swift run ledger history Checking
          swift run ledger import bank-2024-03.csv
          swift run ledger report --month 2024-03
          swift run ledger purge --before 2023-01-01
          swift run ledger watch          # in a second terminal; then transfer in the first
        """
}

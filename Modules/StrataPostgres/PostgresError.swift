import StrataStorage

/// Turns libpq failures into typed ``StrataError``s (design notes §12), keeping the server's
/// SQLSTATE and message in the ``NativeError``.
enum PostgresError {
    /// What the failed call was doing, which decides the case of a lost connection.
    enum Phase {
        /// Opening the store (connect failures are `.io`; a missing database `.notAStore`).
        case opening
        /// Anything but a `COMMIT`: a lost connection wrote nothing (`.busy`).
        case ordinary
        /// A `COMMIT` was sent: a lost connection or a passed deadline leaves the outcome unknown
        /// (`.commitOutcomeUnknown`). Commits settle such failures themselves
        /// (``PostgresEngine/commitIdentified(_:appending:)``); this phase is the classification of last
        /// resort.
        case committing
        /// A new pooled connection of a store that is open: a server that cannot be reached now
        /// (restarting, failing over) is `.busy`, which `performUnitOfWork` retries; a refused
        /// login or a missing database stays what it is at open.
        case reconnecting
    }

    /// The engine's name in every native error.
    static let engine = "postgres"

    /// PostgreSQL's own integer packing of a SQLSTATE (`MAKE_SQLSTATE`: 6 bits a character).
    static func packed(_ sqlState: String?) -> Int {
        guard let sqlState, sqlState.utf8.count == 5 else { return 0 }
        var code = 0
        for (position, byte) in sqlState.utf8.enumerated() {
            code |= ((Int(byte) - 0x30) & 0x3F) << (6 * position)
        }
        return code
    }

    /// The native error of a failure.
    static func native(_ failure: PGFailure, sql: String?, operation: String?, redacting secret: String?) -> NativeError
    {
        var message = failure.message
        if let detail = failure.detail { message += " (\(detail))" }
        if let secret, !secret.isEmpty { message = message.replacing(secret, with: "****") }
        return NativeError(
            engine: engine, code: packed(failure.sqlState), message: message, sql: sql, operation: operation,
            sqlState: failure.sqlState)
    }

    /// The typed error of a failure.
    /// - Parameters:
    ///   - store: the store's redacted location, for messages.
    ///   - timeouts: the options, to name the timeout that ran out.
    static func error(
        _ failure: PGFailure, sql: String?, phase: Phase, store: String, options: PostgresOptions,
        redacting secret: String? = nil
    ) -> StrataError {
        let native = native(failure, sql: sql, operation: nil, redacting: secret)
        guard let state = failure.sqlState, state.utf8.count == 5 else {
            if failure.timedOut && phase == .committing {
                return .commitOutcomeUnknown(
                    """
                    \(store): the server did not answer COMMIT within statementTimeout (\(options.statementTimeout)) \
                    plus 2 s; the commit may or may not have been applied
                    """, native: native)
            }
            if failure.timedOut {
                return .busy(
                    """
                    \(store): the server did not answer within statementTimeout (\(options.statementTimeout)) plus \
                    2 s; the statement was cancelled and the connection dropped, nothing was written. Retry, or \
                    check the server
                    """, native: native)
            }
            switch phase {
            case .opening:
                return connectError(native, store: store)
            case .reconnecting:
                let error = connectError(native, store: store)
                guard case .io(let message, _) = error, message.hasSuffix(Self.unreachable) else { return error }
                return .busy(
                    """
                    \(store): the server cannot be reached now (restarting or failing over?)
                    """, native: native)
            case .committing:
                return .commitOutcomeUnknown(
                    "\(store): the connection was lost while the server committed", native: native)
            case .ordinary:
                return .busy(
                    """
                    \(store): the connection to the server was lost
                    """,
                    native: native)
            }
        }
        let stateClass = String(state.prefix(2))
        switch state {
        case "40001", "40P01":
            return .busy(
                """
                \(store): the server aborted the transaction (serialization failure or deadlock)
                """,
                native: native)
        case "23505":
            return .constraintViolation(entity: failure.table ?? "", attributes: [], native: native)
        case "25006":
            return .busy(
                """
                \(store): the server takes no writes now (\(failure.message)): it is a standby, or read-only \
                (default_transaction_read_only). Point the URL at the primary, or retry once a failover made \
                this server one
                """,
                native: native)
        case "40002":
            return .misuse("\(store): the server refused the statement: \(failure.message)", native: native)
        case "25P03", "57P01", "57P02", "57P03", "57P05", "26000", "72000", "55P03", "55006":
            return .busy(
                """
                \(store): \(failure.message). If locks are held long, raise PostgresOptions.lockTimeout
                """,
                native: native)
        case "57014":
            return .busy(
                """
                \(store): the statement ran past statementTimeout (\(options.statementTimeout)) and was cancelled
                """,
                native: native)
        case "28000", "28P01":
            return .io(
                """
                \(store): the server refused the login: check the user, the password (URL, PGPASSFILE, \
                PGPASSWORD) and pg_hba.conf
                """, native: native)
        case "3D000", "57P04":
            return .notAStore(path: store, reason: StrataError.missingDatabaseReason, native: native)
        case "3F000":
            return .notAStore(path: store, reason: "the schema does not exist", native: native)
        case "40003":
            return .commitOutcomeUnknown(
                "\(store): the server does not know whether the statement completed", native: native)
        case "42501":
            return .io(
                """
                \(store): the role may not do this (\(failure.message)). A running store needs USAGE on the \
                schema and SELECT, INSERT, UPDATE and DELETE on its tables (Docs/Deploying.md); CREATE on the \
                schema only to make or migrate a store
                """,
                native: native)
        case "42P01", "42703":
            return .storeCorrupt(
                """
                \(store): a table or column of the store is missing (dropped or altered outside Strata): \
                \(failure.message)
                """,
                native: native)
        case "53100": return .storeFull("\(store): the server's disk is full; free space on it", native: native)
        case "53200": return .io("\(store): the server is out of memory", native: native)
        case "53300":
            return .busy(
                """
                \(store): the server refused a new connection: too many connections (max_connections, or the \
                role's or database's CONNECTION LIMIT). A perform that saves uses two connections at once; \
                lower poolSize or raise the limit
                """,
                native: native)
        case "54000":
            return .misuse(
                """
                \(store): a value is too long for an index (or passes another server limit): \(failure.message); \
                shorten the value
                """,
                native: native)
        case "XX001", "XX002":
            return .storeCorrupt("\(store): the server reports damaged data: \(failure.message)", native: native)
        case "58030", "58P01", "58P02":
            return .io("\(store): the server failed to read or write its files: \(failure.message)", native: native)
        default: break
        }
        switch stateClass {
        case "08":
            return phase == .committing
                ? .commitOutcomeUnknown("\(store): the connection was lost while the server committed", native: native)
                : .busy("\(store): the connection to the server was lost", native: native)
        case "22", "23", "54":
            return .misuse("\(store): the server refused a value: \(failure.message)", native: native)
        case "25", "2D", "3B", "0B":
            return .misuse("\(store): a transaction was misused (an engine bug): \(failure.message)", native: native)
        case "F0": return .io("\(store): the server's configuration failed: \(failure.message)", native: native)
        default: return .engineFailure(native)
        }
    }

    /// The error of a call on a store after its `close()`.
    static func closed(_ location: String) -> StrataError {
        .misuse("the PostgreSQL store \(location) was closed; open a new PersistentContainer to use it again")
    }

    /// The message of a server that cannot be reached.
    static let unreachable = "cannot connect to the server; check that it runs, the host and port, and the network"

    /// A connect failure (libpq gives no SQLSTATE), classified from libpq's message.
    static func connectError(_ native: NativeError, store: String) -> StrataError {
        let text = native.message
        let connecting = NativeError(
            engine: native.engine, code: native.code, message: text, operation: "PQconnectdbParams")
        if text.contains("does not exist") && text.contains("database") {
            return .notAStore(path: store, reason: StrataError.missingDatabaseReason, native: native)
        }
        // Over a Unix socket with peer or trust authentication, an unknown user is "role … does
        // not exist" (over TCP the server asks for a password first, and refuses that instead).
        if text.contains("password") || text.contains("authentication")
            || (text.contains("role \"") && text.contains("does not exist"))
        {
            return .io(
                """
                \(store): the server refused the login: check the user, the password (URL, PGPASSFILE, \
                PGPASSWORD) and pg_hba.conf
                """,
                native: connecting)
        }
        if text.contains("invalid integer value") || text.contains("invalid port number")
            || text.contains("could not match") || text.contains(/invalid \w+ value: "/)
        {
            return .misuse(
                "\(store): libpq refuses a setting of the URL; fix it (the cause names it)",
                native: connecting)
        }
        if text.contains("too many clients") || text.contains("starting up") || text.contains("shutting down") {
            return .busy("\(store): the server cannot take a connection now", native: native)
        }
        return .io(
            "\(store): \(unreachable)",
            native: connecting)
    }
}

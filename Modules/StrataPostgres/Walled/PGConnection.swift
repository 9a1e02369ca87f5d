// Walled file (strict memory safety): the engine's contact with libpq's connection and statement
// API. Everything it exports is safe Swift: values in, results out, no pointer escapes a call.
import CPostgres
import Foundation
import Glibc
import Synchronization

/// What went wrong in one libpq call: the server's error fields when it answered with an error,
/// else libpq's own message (a lost connection, a timeout, a failed connect).
struct PGFailure: Error, Sendable {
    /// The server's SQLSTATE (`PG_DIAG_SQLSTATE`); nil when the server did not answer.
    var sqlState: String?
    /// The primary message (`PG_DIAG_MESSAGE_PRIMARY`, else libpq's message).
    var message: String
    /// `PG_DIAG_MESSAGE_DETAIL`.
    var detail: String?
    /// `PG_DIAG_CONSTRAINT_NAME`: for a unique violation, the index's name.
    var constraint: String?
    /// `PG_DIAG_TABLE_NAME`.
    var table: String?
    /// Whether the connection is unusable afterwards (`CONNECTION_BAD`, or abandoned after a timeout).
    var connectionBroken: Bool
    /// Whether the client-side deadline passed (the statement was cancelled, the connection dropped).
    var timedOut = false
    /// In a pipeline (``PGConnection/executePipeline(_:deadline:)``), the position of the
    /// statement that failed; nil otherwise.
    var pipelineIndex: Int?
}

/// The state of a connection's transaction (`PQtransactionStatus`).
enum PGTransactionState {
    case idle, active, inTransaction, failedTransaction, unknown
}

/// One libpq connection, used by one thread at a time (libpq allows any thread): `@unchecked
/// Sendable` because the pool hands it to one lease at a time.
///
/// Every statement is sent with `PQsendQueryParams` and awaited with `poll` under a deadline, so
/// a server that stops answering never hangs the caller: past the deadline the statement is
/// cancelled and the connection abandoned.
@safe final class PGConnection: @unchecked Sendable {
    /// The libpq handle: only for the walled C-facing files (PGConnection+Notifications.swift).
    let conn: OpaquePointer
    /// Set when the connection was abandoned (a deadline passed mid-statement): never reused.
    private(set) var abandoned = false
    /// The server's last notices on this connection, which libpq would print to standard error
    /// (PGConnection+Notices.swift).
    let notices = PGNotices()
    /// Statements prepared on this connection: SQL text → statement name. Statements with
    /// parameters are prepared at their first run (one extra round trip) and then executed by name.
    private var prepared: [String: String] = [:]

    /// Connects with libpq keywords (`expand_dbname` lets `dbname` carry a whole URL).
    /// - Throws: ``PGFailure`` with libpq's message (no SQLSTATE: libpq gives none at connect).
    init(keywords: [(String, String)]) throws(PGFailure) {
        let keys = keywords.map { $0.0 }
        let values = keywords.map { $0.1 }
        let connection: OpaquePointer? = unsafe Self.withCStrings(keys) { keyPointers in
            unsafe Self.withCStrings(values) { valuePointers in
                unsafe PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        guard let connection = unsafe connection else {
            throw PGFailure(message: "libpq could not allocate a connection (out of memory)", connectionBroken: true)
        }
        if unsafe PQstatus(connection) != CONNECTION_OK {
            let message = unsafe String(cString: PQerrorMessage(connection))
            unsafe PQfinish(connection)
            throw PGFailure(
                message: message.trimmingCharacters(in: .whitespacesAndNewlines), connectionBroken: true)
        }
        // Non-blocking: sending never waits for a server that stopped reading (the send loop
        // polls under the statement's deadline), and PQfinish's goodbye never blocks.
        if unsafe PQsetnonblocking(connection, 1) != 0 {
            let message = unsafe String(cString: PQerrorMessage(connection))
            unsafe PQfinish(connection)
            throw PGFailure(
                message: "libpq could not make the connection non-blocking: \(message)", connectionBroken: true)
        }
        unsafe conn = connection
        backendPID = Int(unsafe PQbackendPID(connection))
        receiveNotices()
    }

    deinit { unsafe PQfinish(conn) }

    /// Calls `body` with a NULL-terminated array of C strings that live for the call.
    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let duplicated: [UnsafeMutablePointer<CChar>?] = unsafe strings.map { unsafe strdup($0) }
        defer { unsafe duplicated.forEach { unsafe free($0) } }
        let constant: [UnsafePointer<CChar>?] =
            unsafe duplicated.map { unsafe $0.map { unsafe UnsafePointer($0) } } + [nil]
        return unsafe constant.withUnsafeBufferPointer { unsafe body($0.baseAddress!) }
    }

    /// The server's version number (`150020` for 15.20).
    var serverVersion: Int { Int(unsafe PQserverVersion(conn)) }

    /// A server parameter reported at connect (`server_encoding`, …).
    func parameter(_ name: String) -> String? {
        unsafe PQparameterStatus(conn, name).map { unsafe String(cString: $0) }
    }

    /// Whether the connection can no longer be used.
    var isBroken: Bool {
        if abandoned { return true }
        return unsafe PQstatus(conn) == CONNECTION_BAD
    }

    /// The transaction state, for returning a connection to the pool.
    var transactionState: PGTransactionState {
        switch unsafe PQtransactionStatus(conn) {
        case PQTRANS_IDLE: .idle
        case PQTRANS_ACTIVE: .active
        case PQTRANS_INTRANS: .inTransaction
        case PQTRANS_INERROR: .failedTransaction
        default: .unknown
        }
    }

    /// The backend's process id, read at connect: libpq answers 0 once the connection broke, and
    /// a lost commit's backend must still be found (``PostgresEngine/settleCommit(_:backend:sent:failure:)``).
    let backendPID: Int

    /// Runs one statement: parameters in binary, results in binary (`binaryResults`) or text. A
    /// statement with parameters is prepared once per connection and executed by name afterwards.
    ///
    /// Waits at most until `deadline`; past it, asks the server to cancel, abandons the
    /// connection and throws a failure with `timedOut` set.
    /// - Throws: ``PGFailure`` for a server error or a lost connection.
    func execute(
        _ sql: String, _ parameters: [PGParameter] = [], binaryResults: Bool = true, deadline: ContinuousClock.Instant
    ) throws(PGFailure) -> PGResult {
        guard !abandoned else { throw Self.abandonedFailure }
        let name = try preparedName(sql, parameters, deadline: deadline)
        try send(sql, parameters, name: name, binaryResults: binaryResults)
        do {
            return try collect(deadline: deadline)
        } catch {
            // A statement missing on the server (a pooler between us, DEALLOCATE by hand): forget them all.
            if error.sqlState == "26000" { forgetPreparedStatements() }
            throw error
        }
    }

    /// The failure of any statement on a connection abandoned after a timeout.
    static let abandonedFailure = PGFailure(
        message: "the connection was abandoned after a timeout", connectionBroken: true)

    /// The name `sql` is prepared under on this connection, preparing it now (a round trip of its
    /// own) the first time; nil for a statement without parameters, or once ``preparedLimit``
    /// statements are prepared (it then runs unnamed).
    func preparedName(
        _ sql: String, _ parameters: [PGParameter], deadline: ContinuousClock.Instant
    ) throws(PGFailure) -> String? {
        guard !parameters.isEmpty else { return nil }
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.preparedLimit else { return nil }
        let fresh = "strata_\(prepared.count + 1)"
        let types = parameters.map(\.typeOID)
        let sent = unsafe types.withUnsafeBufferPointer { types in
            unsafe PQsendPrepare(conn, fresh, sql, Int32(types.count), types.baseAddress)
        }
        guard sent == 1 else { throw connectionFailure() }
        _ = try collect(deadline: deadline)
        prepared[sql] = fresh
        return fresh
    }

    /// Sends one statement without waiting for it: by `name` when it is prepared, else with its
    /// text. Parameters go in binary; results come in binary (`binaryResults`) or text.
    func send(_ sql: String, _ parameters: [PGParameter], name: String?, binaryResults: Bool) throws(PGFailure) {
        // libpq refuses more; checked first, before the values' pointers are gathered.
        guard parameters.count <= Self.parameterLimit else {
            throw PGFailure(
                message: """
                    a statement takes at most \(Self.parameterLimit) parameters, this one has \(parameters.count); \
                    pass many values as one array parameter
                    """,
                connectionBroken: false)
        }
        let types = parameters.map(\.typeOID)
        // Each parameter's own bytes are handed to libpq in place (not copied into one buffer
        // first: a 300 MB value is not held twice).
        let encoded = parameters.map { $0.encoded() }
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: max(parameters.count, 1))
        let count = Int32(parameters.count)
        let resultFormat: Int32 = binaryResults ? 1 : 0
        let sent: Int32 = unsafe Self.withValuePointers(encoded) { values in
            return unsafe values.withUnsafeBufferPointer { values in
                unsafe lengths.withUnsafeBufferPointer { lengths in
                    unsafe formats.withUnsafeBufferPointer { formats in
                        unsafe types.withUnsafeBufferPointer { types in
                            if let name {
                                unsafe PQsendQueryPrepared(
                                    conn, name, count, values.baseAddress, lengths.baseAddress, formats.baseAddress,
                                    resultFormat)
                            } else {
                                unsafe PQsendQueryParams(
                                    conn, sql, count, types.baseAddress, values.baseAddress, lengths.baseAddress,
                                    formats.baseAddress, resultFormat)
                            }
                        }
                    }
                }
            }
        }
        guard sent == 1 else { throw connectionFailure() }
    }

    /// Forgets every prepared statement's name (the server no longer knows them).
    func forgetPreparedStatements() { prepared.removeAll() }

    /// Marks the connection unusable without cancelling anything: a pipeline it could not leave.
    func abandonWithoutCancel() { abandoned = true }

    /// Calls `body` with a pointer to each value's bytes (nil for NULL), valid for the call.
    private static func withValuePointers<T>(
        _ values: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> T
    ) -> T {
        var pointers: [UnsafePointer<CChar>?] = unsafe []
        unsafe pointers.reserveCapacity(values.count)
        let empty: [UInt8] = [0] // an empty value still needs a pointer (nil means NULL)
        func nest(_ index: Int) -> T {
            guard index < values.count else { return unsafe body(pointers) }
            guard let value = values[index] else {
                unsafe pointers.append(nil)
                return nest(index + 1)
            }
            return unsafe (value.isEmpty ? empty : value).withUnsafeBufferPointer { buffer in
                unsafe pointers.append(UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self))
                return nest(index + 1)
            }
        }
        return nest(0)
    }

    /// Runs parameterless SQL through the simple protocol, which accepts several statements in one
    /// round trip (`BEGIN …; SELECT …`); returns the last statement's result, in text format.
    /// - Throws: ``PGFailure`` for the first statement that failed, or a lost connection.
    func executeScript(_ sql: String, deadline: ContinuousClock.Instant) throws(PGFailure) -> PGResult {
        guard !abandoned else { throw Self.abandonedFailure }
        guard unsafe PQsendQuery(conn, sql) == 1 else { throw connectionFailure() }
        return try collect(deadline: deadline)
    }

    /// The most statements prepared on one connection; later ones run unnamed.
    static let preparedLimit = 512

    /// The most parameters one statement takes (the protocol counts them in 16 bits).
    static let parameterLimit = 65_535

    /// How many commands this connection has sent and waited for (each a round trip to the
    /// server: a statement, a script, a statement's preparation), for tests of how many a read takes.
    var roundTrips = 0

    /// Flushes the command just sent and reads its results: the last one, or the first failure.
    private func collect(deadline: ContinuousClock.Instant) throws(PGFailure) -> PGResult {
        roundTrips += 1
        try flush(deadline: deadline)
        var last: PGResult?
        var failure: PGFailure?
        while true {
            try waitWhileBusy(deadline: deadline)
            guard let raw = unsafe PQgetResult(conn) else { break }
            let result = unsafe PGResult(taking: raw)
            if let error = result.failure(broken: isBroken) {
                if failure == nil { failure = error }
            } else {
                last = result
            }
        }
        if var failure {
            failure.connectionBroken = isBroken
            throw failure
        }
        guard let last else { throw connectionFailure() }
        return last
    }

    /// Sends what libpq buffered, waiting for the socket to take it.
    func flush(deadline: ContinuousClock.Instant) throws(PGFailure) {
        while true {
            let state = unsafe PQflush(conn)
            if state == 0 { return }
            if state < 0 { throw connectionFailure() }
            try waitForSocket(events: Int16(POLLIN | POLLOUT), deadline: deadline)
            if unsafe PQconsumeInput(conn) == 0 { throw connectionFailure() }
        }
    }

    /// Reads input until a whole result is there.
    func waitWhileBusy(deadline: ContinuousClock.Instant) throws(PGFailure) {
        while unsafe PQisBusy(conn) == 1 {
            try waitForSocket(events: Int16(POLLIN), deadline: deadline)
            if unsafe PQconsumeInput(conn) == 0 { throw connectionFailure() }
        }
    }

    /// Waits for the socket, or cancels and abandons the connection when the deadline passes.
    private func waitForSocket(events: Int16, deadline: ContinuousClock.Instant) throws(PGFailure) {
        let socket = unsafe PQsocket(conn)
        guard socket >= 0 else { throw connectionFailure() }
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero {
                cancelAndAbandon()
                throw PGFailure(
                    message: "the server did not answer within the statement's deadline", connectionBroken: true,
                    timedOut: true)
            }
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = unsafe poll(&descriptor, 1, min(milliseconds, 1000))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw connectionFailure() }
        }
    }

    /// Asks the server to cancel the running statement, then marks the connection unusable.
    ///
    /// The cancel request is sent from a thread of its own (``PGCancelSender``): libpq's
    /// `PQcancel` connects to the server and waits for it to close the connection, which a
    /// stopped server never does, and the caller must not wait for that.
    private func cancelAndAbandon() {
        if let cancel = unsafe PQgetCancel(conn) {
            unsafe PGCancelSender.send(PGCancelRequest(cancel))
        }
        abandoned = true
    }

    /// libpq's message for a failure without a server result.
    func connectionFailure() -> PGFailure {
        let raw = unsafe String(cString: PQerrorMessage(conn))
        let message = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        var text = message.isEmpty ? "the connection to the server failed" : message
        if let notice = notices.last.last(where: PGNotices.endsConnection) { text += " (the server said: \(notice))" }
        return PGFailure(message: text, connectionBroken: isBroken)
    }
}

/// libpq's cancel handle for one connection (`PGcancel`), owned by whoever holds this value: it
/// is independent of the connection (the connection may be finished while it is in flight) and
/// is freed once used.
@safe struct PGCancelRequest: @unchecked Sendable {
    fileprivate let handle: OpaquePointer

    fileprivate init(_ handle: OpaquePointer) { unsafe self.handle = handle }

    /// Sends the request (a new connection to the server carrying the backend's key), waiting as
    /// long as libpq does, then frees the handle. Call once.
    fileprivate func sendAndFree() {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = unsafe buffer.withUnsafeMutableBufferPointer { unsafe PQcancel(handle, $0.baseAddress, 256) }
        unsafe PQfreeCancel(handle)
    }

    /// Frees the handle without sending anything.
    fileprivate func free() { unsafe PQfreeCancel(handle) }
}

/// Sends cancel requests from threads of their own, so that a caller whose deadline passed
/// returns at once even when the server, stopped, would hold `PQcancel` for as long as it is
/// stopped.
///
/// At most ``limit`` requests are in flight in the process; past that a request is dropped:
/// the server cancels the statement itself when its own `statement_timeout` (set on every
/// connection to ``PostgresOptions/statementTimeout``) runs out, so the client's request only
/// frees the server sooner.
enum PGCancelSender {
    /// The most cancel requests in flight at once.
    static let limit = 16
    private static let inFlight = Atomic<Int>(0)

    /// Sends `request` on a new thread, or drops it when ``limit`` are in flight.
    static func send(_ request: PGCancelRequest) {
        guard inFlight.add(1, ordering: .relaxed).newValue <= limit else {
            inFlight.subtract(1, ordering: .relaxed)
            request.free()
            return
        }
        let thread = Thread {
            request.sendAndFree()
            inFlight.subtract(1, ordering: .relaxed)
        }
        thread.name = "strata-postgres-cancel"
        thread.start()
    }

    /// The requests in flight now (for tests).
    static var pending: Int { inFlight.load(ordering: .relaxed) }
}

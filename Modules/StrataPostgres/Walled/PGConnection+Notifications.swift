// Walled file (strict memory safety): the engine's contact with libpq's notification API
// (PQsocket, PQconsumeInput, PQnotifies, PQfreemem). Everything it exports is safe Swift.
import CPostgres
import Foundation
import Glibc

/// One notification a listening connection received (`NOTIFY channel, 'payload'`).
struct PGNotification: Sendable, Equatable {
    var channel: String
    var payload: String
}

extension PGConnection {
    /// Waits up to `timeout` for the server to send something on this idle, listening connection,
    /// reads it, and returns the notifications received (empty when none came in time).
    /// - Throws: ``PGFailure`` with `connectionBroken` when the connection was lost.
    func receiveNotifications(waitingAtMost timeout: Duration) throws(PGFailure) -> [PGNotification] {
        var received = drainNotifications()
        if !received.isEmpty { return received }
        let socket = unsafe PQsocket(conn)
        guard socket >= 0 else { throw lostConnection() }
        let milliseconds = Int32(clamping: PostgresConnectionSettings.milliseconds(timeout))
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = unsafe poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return [] }
            throw lostConnection()
        }
        if ready == 0 { return [] }
        guard unsafe PQconsumeInput(conn) == 1 else { throw lostConnection() }
        received = drainNotifications()
        if received.isEmpty && isBroken { throw lostConnection() }
        return received
    }

    /// Takes every notification libpq has buffered, freeing each.
    private func drainNotifications() -> [PGNotification] {
        var received: [PGNotification] = []
        while let notification = unsafe PQnotifies(conn) {
            let channel = unsafe String(cString: notification.pointee.relname)
            let payload = unsafe String(cString: notification.pointee.extra)
            unsafe PQfreemem(notification)
            received.append(PGNotification(channel: channel, payload: payload))
        }
        return received
    }

    private func lostConnection() -> PGFailure {
        let message = unsafe String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines)
        return PGFailure(
            message: message.isEmpty ? "the listening connection to the server was lost" : message,
            connectionBroken: true)
    }
}

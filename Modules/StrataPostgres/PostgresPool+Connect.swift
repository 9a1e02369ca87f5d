import Foundation
import StrataStorage

/// New connections that ride out a server restart: a connect the server refuses because it is
/// starting up, shutting down or in recovery, or that finds no server at all (the gap between a
/// restart's stop and start), is tried again with a short backoff until `connectTimeout` has
/// passed since the first try; then the last failure is thrown.
extension PostgresPool {
    /// The first pause between two tries; each pause doubles, up to ``longestConnectPause``.
    static let firstConnectPause = Duration.milliseconds(25)
    /// The longest pause between two tries.
    static let longestConnectPause = Duration.milliseconds(500)

    /// A new connection to the server, retried while the server is unavailable (see above).
    /// - Throws: ``PGFailure``: the last try's failure, at once when it is not about the server's
    ///   availability (a refused login, a missing database, a bad setting).
    func connect() throws(PGFailure) -> PGConnection {
        let deadline = ContinuousClock.now + options.connectTimeout
        var pause = Self.firstConnectPause
        while true {
            do {
                return try PGConnection(keywords: settings.keywords)
            } catch {
                let left = ContinuousClock.now.duration(to: deadline)
                guard Self.serverUnavailable(error), left > .zero else { throw error }
                Thread.sleep(forTimeInterval: Self.seconds(min(pause, left)))
                pause = min(pause * 2, Self.longestConnectPause)
            }
        }
    }

    /// The error of a server that stayed unavailable, saying how long it was tried.
    func afterRetrying(_ error: StrataError) -> StrataError {
        let tried = " (tried again for connectTimeout, \(options.connectTimeout))"
        switch error {
        case .io(let detail, let native): return .io(detail + tried, native: native)
        case .busy(let detail, let native): return .busy(detail + tried, native: native)
        default: return error
        }
    }

    /// Whether a connect failure says the server is not available now (rather than that the
    /// settings, the login or the database are wrong): libpq's messages, which carry no SQLSTATE
    /// at connect.
    static func serverUnavailable(_ failure: PGFailure) -> Bool {
        let text = failure.message
        let wrongInput = [
            "password", "authentication", "does not exist", "invalid", "could not translate host name",
            "too many clients",
        ]
        if wrongInput.contains(where: text.contains) { return false }
        let unavailable = [
            "starting up", "shutting down", "recovery mode", "not yet accepting connections", "Connection refused",
            "No such file or directory", "server closed the connection unexpectedly", "could not connect",
        ]
        return unavailable.contains(where: text.contains)
    }
}

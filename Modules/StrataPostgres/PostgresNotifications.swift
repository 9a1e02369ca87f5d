import Foundation
import StrataStorage

/// The engine's LISTEN connection (design notes §10.4): one dedicated connection outside the
/// pool, listening on the store's channel (`strata.<schema>`), where every commit that appends
/// history sends its token (``PostgresEngine/historyAppend(_:)``).
///
/// Started by the first ``waitForHistory(after:until:)`` (a store nobody observes never opens
/// it); a thread of its own waits on the socket, records the highest token notified and wakes
/// the waiters. A dropped connection is reopened with back-off; meanwhile waiters hear nil (the
/// signal is down) and poll. On each (re)connect it LISTENs first and then reads the clock, so a
/// commit made while it was down is not missed. ``stop()`` (the engine's `close()`) ends it.
final class PostgresNotifications: @unchecked Sendable {
    let settings: PostgresConnectionSettings
    let statementTimeout: Duration
    /// The channel name: `strata.` + the schema, cut to PostgreSQL's 63 bytes on a character boundary.
    let channel: String
    private let listenScript: String

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var started = false
    private var stopped = false
    private var running = false
    private var listening = false
    private var highestToken: Int64 = 0
    private var backendPID: Int?

    /// How long the thread waits on the socket before checking whether it was stopped.
    static let wakeInterval: Duration = .milliseconds(100)
    /// The first and the longest pause before reconnecting.
    static let firstBackoff = 0.05
    static let longestBackoff = 2.0

    init(settings: PostgresConnectionSettings, statementTimeout: Duration, names: PostgresStoreNames) {
        self.settings = settings
        self.statementTimeout = statementTimeout
        channel = Self.channelName(schema: settings.schema)
        listenScript = "LISTEN \(pgQuoted(channel)); SELECT last_token FROM \(names.historyClock) WHERE id = 1"
    }

    /// `strata.<schema>`, at most 63 bytes (a longer name is refused by `pg_notify`). Two schemas
    /// that share their first 56 bytes share a channel: harmless, a notification is only a hint.
    static func channelName(schema: String) -> String {
        var name = "strata."
        for character in schema {
            if name.utf8.count + String(character).utf8.count > 63 { break }
            name.append(character)
        }
        return name
    }

    /// Waits for a commit after `token` (see ``StrataStorage/HistorySignalling``); starts the
    /// listener on first use. Nil while it is not connected or after ``stop()``.
    func waitForHistory(after token: Int64, until deadline: ContinuousClock.Instant) -> Bool? {
        condition.lock()
        defer { condition.unlock() }
        if stopped { return nil }
        if !started {
            started = true
            running = true
            let thread = Thread { [self] in listen() }
            thread.name = "strata.postgres.listen"
            thread.start()
        }
        while !stopped && listening && highestToken <= token {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { break }
            _ = condition.wait(until: Date().addingTimeInterval(Self.seconds(left)))
        }
        guard !stopped && listening else { return nil }
        return highestToken > token
    }

    /// The listening connection's server process, nil while it is down (for tests that kill it).
    var listenerBackendPID: Int? {
        condition.lock()
        defer { condition.unlock() }
        return backendPID
    }

    /// Ends the listener and wakes every waiter (with nil); returns once its connection is closed
    /// (or after a few seconds, if it is stuck connecting to a server that does not answer).
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        condition.broadcast()
        let limit = Date().addingTimeInterval(3)
        while running {
            if !condition.wait(until: limit) { break }
        }
    }

    private var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// The thread's loop: connect and listen, receive until the connection drops, back off, again.
    private func listen() {
        var backoff = Self.firstBackoff
        while !isStopped {
            if let connection = connectAndListen() {
                backoff = Self.firstBackoff
                receive(on: connection)
                setDown()
            } else {
                pause(seconds: backoff)
                backoff = min(backoff * 2, Self.longestBackoff)
            }
        }
        condition.lock()
        running = false
        listening = false
        backendPID = nil
        condition.broadcast()
        condition.unlock()
    }

    /// A new connection listening on the channel, with the clock's token recorded; nil on failure.
    private func connectAndListen() -> PGConnection? {
        do throws(PGFailure) {
            let connection = try PGConnection(keywords: settings.keywords)
            let result = try connection.executeScript(listenScript, deadline: .now + statementTimeout)
            let token = result.rowCount == 1 ? result.text(0, 0).flatMap { Int64($0) } ?? 0 : 0
            condition.lock()
            listening = true
            highestToken = max(highestToken, token)
            backendPID = connection.backendPID
            condition.broadcast()
            condition.unlock()
            return connection
        } catch {
            return nil
        }
    }

    /// Records the tokens notified on `connection` until it drops or the listener is stopped.
    private func receive(on connection: PGConnection) {
        while !isStopped {
            let notifications: [PGNotification]
            do throws(PGFailure) {
                notifications = try connection.receiveNotifications(waitingAtMost: Self.wakeInterval)
            } catch {
                return
            }
            let tokens = notifications.filter { $0.channel == channel }.compactMap { Int64($0.payload) }
            guard let highest = tokens.max() else { continue }
            condition.lock()
            if highest > highestToken {
                highestToken = highest
                condition.broadcast()
            }
            condition.unlock()
        }
    }

    private func setDown() {
        condition.lock()
        listening = false
        backendPID = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Sleeps `seconds`, or less when stopped.
    private func pause(seconds: Double) {
        let until = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !stopped {
            if !condition.wait(until: until) { break }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

extension PostgresEngine: HistorySignalling {
    func waitForHistory(after token: Int64, until deadline: ContinuousClock.Instant) -> Bool? {
        notifications.waitForHistory(after: token, until: deadline)
    }
}

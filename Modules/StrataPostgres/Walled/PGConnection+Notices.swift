// Walled file (strict memory safety): the engine's contact with libpq's notice receiver
// (PQsetNoticeReceiver, PQresultErrorMessage). Everything it exports is safe Swift.
import CPostgres
import Foundation
import Synchronization

/// The last notices the server sent on one connection: a NOTICE or WARNING, or the FATAL that
/// reaches an idle connection when the server shuts down ("terminating connection due to
/// administrator command").
///
/// libpq's default notice processor prints each one to standard error, in the middle of the
/// application's own output. The engine installs a receiver on every connection instead: notices
/// are kept here (the last ``kept``), never printed, and the last FATAL or PANIC one is added to
/// the message of the connection's next failure without a server result, where it says why the
/// connection was lost.
final class PGNotices: Sendable {
    /// How many notices a connection keeps.
    static let kept = 4
    private let messages = Mutex<[String]>([])

    /// The kept notices, oldest first, each as libpq formats it (`"FATAL:  terminating …"`).
    var last: [String] { messages.withLock { $0 } }

    /// Whether a notice is one that ends the connection (FATAL or PANIC): the reason a
    /// connection was lost, worth adding to its failure's message.
    static func endsConnection(_ notice: String) -> Bool {
        notice.hasPrefix("FATAL:") || notice.hasPrefix("PANIC:")
    }

    func append(_ message: String) {
        messages.withLock { messages in
            messages.append(message)
            if messages.count > Self.kept { messages.removeFirst(messages.count - Self.kept) }
        }
    }
}

extension PGConnection {
    /// Routes the connection's notices to ``notices`` instead of standard error. Called once, by
    /// `init`; the receiver's context is `notices`, which the connection keeps until `PQfinish`.
    func receiveNotices() {
        let context = unsafe Unmanaged.passUnretained(notices).toOpaque()
        _ = unsafe PQsetNoticeReceiver(
            conn,
            { context, result in
                guard let context = unsafe context, let result = unsafe result,
                    let text = unsafe PQresultErrorMessage(result)
                else { return }
                let notices = unsafe Unmanaged<PGNotices>.fromOpaque(context).takeUnretainedValue()
                let message = unsafe String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
                if !message.isEmpty { notices.append(message) }
            }, context)
    }
}

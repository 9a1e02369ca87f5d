// The tests' C-facing proxy code: a loopback TCP proxy in front of the test server's Unix socket
// that loses what a test tells it to lose at a commit. Never a real address.
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of the PostgreSQL test server's Unix socket, which injects
/// one fault at the next identified commit (the engine's pipeline of the identity's `INSERT INTO …
/// strata_commits` and `COMMIT`): the faults a network or a sick server causes, made exact.
///
/// It reads what clients send as protocol messages (``FrontendMessages``) and passes a pipeline
/// on once it is whole (through its Sync), so a commit is found however its pipeline is split
/// between reads (a large history append passes libpq's 8 KiB buffer), and a fault applies to the
/// whole pipeline: the history append, the identity and the `COMMIT`.
///
/// Connections through it reach the server as local connections, so the server's `trust` login
/// applies, and the URL is `postgresql://USER@127.0.0.1:PORT/DATABASE`.
final class PostgresFaultProxy: @unchecked Sendable {
    enum Fault: Sendable {
        /// The commit reaches the server, which commits; its reply is lost (the server's reply is
        /// read through its ReadyForQuery and dropped, then the client's connection is cut and the
        /// server's closed).
        case loseReply
        /// The commit is sent whole and both connections are cut at once: the server may or may
        /// not have run the `COMMIT` when it finds its client gone (a large pipeline is usually
        /// still being read, and is rolled back).
        case cutAfterSending
        /// The commit never reaches the server; the client's connection is cut, the server's kept
        /// (its session idles in the open transaction until someone ends it).
        case swallowCommit
        /// From the commit on, nothing passes in either direction on any connection, old or new:
        /// a server that stopped answering. New connections are accepted and left unanswered.
        case blackHole
        /// The commit's pipeline is held back, the server's session idling in its open
        /// transaction, until ``release()``; then it passes on. A commit delayed on the way while
        /// other transactions run and commit (``isHolding`` says when it is held).
        case holdPipeline
        /// As ``holdPipeline``, but the pipeline's statements before the `COMMIT` (the history
        /// append, the identity) pass at once: only the `COMMIT` is held back. ``isHolding`` turns
        /// true once they are sent, not once the server has run them. With history the append
        /// holds the history clock's row lock meanwhile, so other commits with history wait.
        case holdCommitStatement
    }

    let port: Int
    /// The URL to open the test server through the proxy.
    let url: String
    private let listener: Int32
    private let serverPath: String
    private let armed = Mutex<Fault?>(nil)
    private let blackHoled = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let triggeredCount = Atomic<Int>(0)
    private let faultedBytes = Atomic<Int>(0)
    private let holding = Atomic<Bool>(false)
    private let released = Atomic<Bool>(false)

    /// Starts a proxy to the server of `serverURL` (a `host=<socket dir>&port=<port>` URL, as
    /// `Scripts/with-postgres.sh` makes).
    init(serverURL: String) throws {
        guard let components = URLComponents(string: serverURL),
            let directory = components.queryItems?.first(where: { $0.name == "host" })?.value,
            let serverPort = components.queryItems?.first(where: { $0.name == "port" })?.value
        else { throw PostgresSQLError(message: "the test URL names no socket directory and port: \(serverURL)") }
        serverPath = "\(directory)/.s.PGSQL.\(serverPort)"
        let socket = try LoopbackSocket(listening: true)
        listener = dup(socket.descriptor)
        port = socket.port
        let user = components.user ?? "strata"
        let database = components.path.isEmpty ? "strata" : String(components.path.dropFirst())
        url = "postgresql://\(user)@127.0.0.1:\(port)/\(database)"
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { Glibc.close(listener) }

    /// Injects `fault` at the next identified commit through the proxy (once).
    func arm(_ fault: Fault) {
        released.store(false, ordering: .relaxed)
        armed.withLock { $0 = fault }
    }

    /// Whether a commit is being held back (``Fault/holdPipeline``, ``Fault/holdCommitStatement``).
    var isHolding: Bool { holding.load(ordering: .relaxed) }

    /// Passes on the commit held back (or the next one, if none is held yet).
    func release() { released.store(true, ordering: .relaxed) }

    /// How many faults were injected.
    var triggered: Int { triggeredCount.load(ordering: .relaxed) }

    /// The size in bytes of the last pipeline a fault was injected at (the proxy reads at most
    /// 64 KiB at a time, so a larger one reached it in several reads).
    var faultedPipelineBytes: Int { faultedBytes.load(ordering: .relaxed) }

    /// Lets traffic pass again after ``Fault/blackHole`` (connections cut off stay cut off).
    func heal() { blackHoled.store(false, ordering: .relaxed) }

    /// Stops accepting and forwarding.
    func stop() { stopped.store(true, ordering: .relaxed) }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            if blackHoled.load(ordering: .relaxed) {
                // Accepted and never answered; closed when the proxy stops.
                Thread { [self] in
                    while !stopped.load(ordering: .relaxed) { usleep(100_000) }
                    Glibc.close(client)
                }.start()
                continue
            }
            guard let server = connectToServer() else {
                Glibc.close(client)
                continue
            }
            Thread { [self] in relay(client: client, server: server) }.start()
        }
    }

    private func connectToServer() -> Int32? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(serverPath.utf8.prefix(capacity - 1))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
            buffer[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Copies bytes both ways until either side closes, injecting the armed fault at the next
    /// identified commit: a pipeline (the extended-protocol messages up to a Sync) that parses
    /// `COMMIT` as an unnamed statement (Parse: `P`, an empty name, `COMMIT`). Opening a store also
    /// parses `COMMIT` so: arm the proxy after the open.
    private func relay(client: Int32, server: Int32) {
        var keepServer = false
        defer {
            Glibc.close(client)
            if !keepServer { Glibc.close(server) }
        }
        var messages = FrontendMessages()
        // The extended-protocol messages since the last Sync (or other message that makes the
        // server answer), and whether they parse COMMIT: kept until the pipeline is whole.
        var pipeline: [UInt8] = []
        // Where the pipeline's Parse of COMMIT starts in it, if it has one.
        var commitStart: Int?
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopped.load(ordering: .relaxed) {
            if blackHoled.load(ordering: .relaxed) {
                usleep(50_000)
                continue
            }
            var descriptors = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 2, 100) > 0 else { continue }
            if descriptors[0].revents != 0 {
                let count = read(client, &buffer, buffer.count)
                if count <= 0 { return }
                messages.append(buffer[0..<count])
                var passing: [UInt8] = []
                while let message = messages.next() {
                    if message.isUnnamedParse(of: "COMMIT") { commitStart = pipeline.count }
                    pipeline += message.bytes
                    if FrontendMessages.pipelined.contains(message.type) { continue }
                    let whole = pipeline
                    let start = commitStart ?? 0
                    let fault =
                        commitStart != nil && message.type == UInt8(ascii: "S") ? armed.withLock { $0.take() } : nil
                    pipeline = []
                    commitStart = nil
                    guard let fault else {
                        passing += whole
                        continue
                    }
                    triggeredCount.add(1, ordering: .relaxed)
                    faultedBytes.store(whole.count, ordering: .relaxed)
                    switch fault {
                    case .loseReply:
                        // Closed at once, the server could find its peer gone before the COMMIT of
                        // a large pipeline ran, and roll back: a lost connection, not a lost reply.
                        if Self.writeAll(server, passing + whole) { Self.drainReply(server) }
                        return
                    case .cutAfterSending:
                        _ = Self.writeAll(server, passing + whole)
                        return
                    case .swallowCommit:
                        _ = Self.writeAll(server, passing)
                        keepServer = true
                        Thread { [self] in
                            while !stopped.load(ordering: .relaxed) { usleep(100_000) }
                            Glibc.close(server)
                        }.start()
                        return
                    case .blackHole:
                        blackHoled.store(true, ordering: .relaxed)
                        _ = Self.writeAll(server, passing + whole)
                        passing = []
                    case .holdPipeline, .holdCommitStatement:
                        let kept = fault == .holdPipeline ? 0 : start
                        passing += whole[0..<kept]
                        guard Self.writeAll(server, passing) else { return }
                        holding.store(true, ordering: .relaxed)
                        while !released.load(ordering: .relaxed) && !stopped.load(ordering: .relaxed) {
                            usleep(1_000)
                        }
                        holding.store(false, ordering: .relaxed)
                        passing = Array(whole[kept...])
                    }
                }
                if blackHoled.load(ordering: .relaxed) { continue }
                guard Self.writeAll(server, passing) else { return }
            }
            if descriptors[1].revents != 0 {
                let count = read(server, &buffer, buffer.count)
                if count <= 0 { return }
                guard write(client, buffer, count) == count else { return }
            }
        }
    }
}

extension PostgresFaultProxy {
    /// Writes all of `bytes` to `descriptor` (a write may take part of them); false when it fails.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return false }
            written += count
        }
        return true
    }

    /// Reads and drops what the server sends until its ReadyForQuery (`Z`, length 5, a status
    /// byte: the last message of a pipeline's reply), the connection's end, or 10 seconds.
    static func drainReply(_ server: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: server, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = read(server, &buffer, buffer.count)
            if count <= 0 { return }
            // Searched from where the last read could have left a partial match.
            let from = max(0, received.count - 5)
            received += buffer[0..<count]
            let readyForQuery: [UInt8] = [UInt8(ascii: "Z"), 0, 0, 0, 5]
            if received.count >= from + 6,
                (from...(received.count - 6)).contains(where: { received[$0..<($0 + 5)].elementsEqual(readyForQuery) })
            {
                return
            }
        }
    }
}

/// What a PostgreSQL client sends, cut into whole protocol messages however the bytes arrive:
/// first the untyped ones (an SSL or GSS encryption request, then the startup message: a length
/// and a code), then typed ones (a type byte, then a length that counts itself).
struct FrontendMessages {
    struct Message {
        /// The type byte; 0 for an untyped message.
        let type: UInt8
        /// The whole message, as sent.
        let bytes: [UInt8]

        /// Whether this is a Parse of `sql` as the unnamed statement.
        func isUnnamedParse(of sql: String) -> Bool {
            guard type == UInt8(ascii: "P") else { return false }
            let expected: [UInt8] = [0] + Array(sql.utf8) + [0]
            return bytes.count >= 5 + expected.count && bytes[5..<(5 + expected.count)].elementsEqual(expected)
        }
    }

    /// The types a pipeline's messages wait with for the rest of it: Parse, Bind, Describe,
    /// Execute and Close (the server answers at the Sync that ends it).
    static let pipelined = Set("PBDEC".utf8)

    /// Bytes received; those before ``consumed`` were returned as messages.
    private var pending: [UInt8] = []
    private var consumed = 0
    /// Whether the startup message has passed (typed messages follow).
    private var started = false

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        // Returned bytes are dropped once per read, not once per message.
        pending.removeFirst(consumed)
        consumed = 0
        pending += bytes
    }

    /// The next whole message, or nil until more bytes arrive.
    mutating func next() -> Message? {
        let header = started ? 5 : 8
        guard pending.count - consumed >= header else { return nil }
        let lengthStart = consumed + (started ? 1 : 0)
        let length = pending[lengthStart..<(lengthStart + 4)].reduce(0) { $0 << 8 | Int($1) }
        let total = (started ? 1 : 0) + length
        guard total >= header, pending.count - consumed >= total else { return nil }
        let bytes = Array(pending[consumed..<(consumed + total)])
        consumed += total
        if started { return Message(type: bytes[0], bytes: bytes) }
        let code = bytes[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        // Protocol 3.x (a newer libpq may ask for 3.2); the encryption requests' codes are not.
        if code >> 16 == 3 { started = true }
        return Message(type: 0, bytes: bytes)
    }
}

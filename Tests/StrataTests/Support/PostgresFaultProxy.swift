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
/// Connections through it reach the server as local connections, so the server's `trust` login
/// applies, and the URL is `postgresql://USER@127.0.0.1:PORT/DATABASE`.
final class PostgresFaultProxy: @unchecked Sendable {
    enum Fault: Sendable {
        /// The commit reaches the server, which commits; its reply is lost (the client's
        /// connection is cut, the server's is closed after it).
        case loseReply
        /// The commit never reaches the server; the client's connection is cut, the server's kept
        /// (its session idles in the open transaction until someone ends it).
        case swallowCommit
        /// From the commit on, nothing passes in either direction on any connection, old or new:
        /// a server that stopped answering. New connections are accepted and left unanswered.
        case blackHole
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
    func arm(_ fault: Fault) { armed.withLock { $0 = fault } }

    /// How many faults were injected.
    var triggered: Int { triggeredCount.load(ordering: .relaxed) }

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

    /// Whether `chunk` holds the engine's identified commit, recognised by its `COMMIT`, parsed as
    /// an unnamed statement (`P`, an empty name, then `COMMIT` and its NUL) in the pipeline that
    /// also inserts the commit's identity. Opening a store also parses `COMMIT` so: arm the proxy after
    /// the open. A pipeline whose parameters pass libpq's 8 KiB output buffer may be split where
    /// the bytes looked for straddle two reads; the tests' commits are far smaller.
    private static func isIdentifiedCommit(_ chunk: [UInt8]) -> Bool {
        let parse = Array("P".utf8)
        let commit = Array("\0COMMIT\0".utf8)
        guard chunk.count >= commit.count else { return false }
        for start in 0...(chunk.count - commit.count) where chunk[start..<start + commit.count].elementsEqual(commit) {
            // The Parse message: "P", a four-byte length, then the empty name (the NUL matched).
            if start >= 5, chunk[start - 5] == parse[0] { return true }
        }
        return false
    }

    /// Copies bytes both ways until either side closes, injecting the armed fault.
    private func relay(client: Int32, server: Int32) {
        var keepServer = false
        defer {
            Glibc.close(client)
            if !keepServer { Glibc.close(server) }
        }
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
                let chunk = Array(buffer[0..<count])
                let fault = Self.isIdentifiedCommit(chunk) ? armed.withLock { $0.take() } : nil
                if fault != nil { triggeredCount.add(1, ordering: .relaxed) }
                switch fault {
                case .loseReply?:
                    _ = write(server, chunk, count)
                    return
                case .swallowCommit?:
                    keepServer = true
                    Thread { [self] in
                        while !stopped.load(ordering: .relaxed) { usleep(100_000) }
                        Glibc.close(server)
                    }.start()
                    return
                case .blackHole?:
                    blackHoled.store(true, ordering: .relaxed)
                    _ = write(server, chunk, count)
                    continue
                case nil:
                    guard write(server, chunk, count) == count else { return }
                }
            }
            if descriptors[1].revents != 0 {
                let count = read(server, &buffer, buffer.count)
                if count <= 0 { return }
                guard write(client, buffer, count) == count else { return }
            }
        }
    }
}

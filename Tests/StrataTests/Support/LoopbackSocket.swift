// The tests' C-facing socket code: loopback TCP sockets for the server bad-input tests (a port
// that refuses connections, a port that accepts them and never answers). Never a real address.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket bound to 127.0.0.1 on a port the kernel chose.
final class LoopbackSocket {
    let descriptor: Int32
    let port: Int

    /// Binds a socket to 127.0.0.1:0; with `listening`, it also listens (backlog 8) and the
    /// kernel completes the handshake of every connection, but nobody ever accepts or answers.
    init(listening: Bool) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw PostgresSQLError(message: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, !listening || listen(descriptor, 8) == 0 else {
            let failure = errno
            close(descriptor)
            throw PostgresSQLError(message: "binding or listening on 127.0.0.1 failed: errno \(failure)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// A loopback port nothing listens on: bound, then closed again, so connecting to it is refused.
    static func closedPort() throws -> Int {
        try LoopbackSocket(listening: false).port
    }
}

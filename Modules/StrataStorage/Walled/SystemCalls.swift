import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The POSIX and Foundation calls of the engines that take C strings or pointers, behind safe
/// signatures: the file system calls of store creation, the file lock and the file check, and
/// the limits ``StoreRoom`` reads after a failed write.
///
/// Walled file (strict memory safety): each function converts its `String` arguments and C
/// string results here and passes the C calls only pointers to its own locals, so the callers
/// stay safe Swift.
///
/// ```swift
/// let descriptor = SystemCalls.open(path, O_RDWR | O_CREAT, 0o644)
/// if descriptor < 0 { print(SystemCalls.errorText(errno)) }
/// ```
package enum SystemCalls {
    /// `open(2)`: a descriptor, or -1 with `errno` set; `mode` is the permission bits of a file
    /// it creates.
    package static func open(_ path: String, _ flags: Int32, _ mode: UInt32) -> Int32 {
        unsafe Glibc.open(path, flags, mode_t(mode))
    }

    /// `link(2)`: 0, or the `errno` of the failure.
    package static func link(_ existing: String, _ new: String) -> Int32 {
        unsafe Glibc.link(existing, new) == 0 ? 0 : errno
    }

    /// Whether this process may write the file (or directory) at `path` (`access(2)` with
    /// `W_OK`): 0, or the `errno` that says why not (`EACCES` for its permissions, `EPERM` for
    /// an immutable file, `EROFS` for a read-only file system, `ENOENT` when nothing is there).
    package static func writeAccessError(_ path: String) -> Int32 {
        unsafe Glibc.access(path, W_OK) == 0 ? 0 : errno
    }

    /// `unlink(2)`, ignoring failure.
    package static func unlink(_ path: String) {
        _ = unsafe Glibc.unlink(path)
    }

    /// Opens `directory` and `fsync`s it (best effort: some file systems refuse).
    package static func syncDirectory(_ directory: String) {
        let descriptor = unsafe Glibc.open(directory, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        Glibc.close(descriptor)
    }

    /// The system's text for an `errno` value (`strerror`).
    package static func errorText(_ code: Int32) -> String {
        unsafe String(cString: strerror(code))
    }

    /// Whether something exists at `path` (following symbolic links) and is a directory; nil
    /// when nothing exists there.
    package static func isDirectory(atPath path: String) -> Bool? {
        fileKind(atPath: path).map { $0 == .directory }
    }

    /// What is at `path` (`stat(2)`, following symbolic links; `lstat(2)` when `followingLinks`
    /// is false), without opening it: nil when nothing is there (or it cannot be looked at).
    /// Check it before opening a file that should be regular: opening a FIFO for reading waits
    /// for a writer, forever.
    package static func fileKind(atPath path: String, followingLinks: Bool = true) -> FileKind? {
        var info = stat()
        let rc = unsafe followingLinks ? stat(path, &info) : lstat(path, &info)
        guard rc == 0 else { return nil }
        return FileKind(mode: UInt32(info.st_mode))
    }

    /// What the open file `descriptor` is and its size in bytes (`fstat(2)`), or nil when it
    /// cannot be read.
    package static func fileStatus(descriptor: Int32) -> (kind: FileKind, size: Int)? {
        var info = stat()
        guard unsafe fstat(descriptor, &info) == 0 else { return nil }
        return (FileKind(mode: UInt32(info.st_mode)), Int(info.st_size))
    }

    /// `mkdir(2)` with `mode` (less the umask): 0, or the `errno` of the failure.
    package static func makeDirectory(_ path: String, _ mode: UInt32 = 0o777) -> Int32 {
        unsafe Glibc.mkdir(path, mode_t(mode)) == 0 ? 0 : errno
    }

    /// `rmdir(2)`, ignoring failure (a directory that is not empty stays).
    package static func removeEmptyDirectory(_ path: String) {
        _ = unsafe Glibc.rmdir(path)
    }

    /// The process's file-size limit (`RLIMIT_FSIZE`) in bytes; nil when there is none or it
    /// cannot be read.
    package static func fileSizeLimit() -> UInt64? {
        var limit = rlimit()
        guard unsafe getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return UInt64(limit.rlim_cur)
    }

    /// The bytes free to an unprivileged process on the file system holding `directory` (the
    /// current directory when empty); nil when they cannot be read or pass `UInt64`.
    package static func freeBytes(directory: String) -> UInt64? {
        var stats = statvfs()
        guard unsafe statvfs(directory.isEmpty ? "." : directory, &stats) == 0 else { return nil }
        let free = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
        return free.overflow ? nil : free.partialValue
    }

    /// The size of the file at `path` in bytes (`stat(2)`), or nil when it cannot be read.
    package static func fileSize(_ path: String) -> UInt64? {
        var info = stat()
        guard unsafe stat(path, &info) == 0 else { return nil }
        return UInt64(clamping: info.st_size)
    }
}

/// The type of a file system entry (from `st_mode`), for messages and for refusing what a store
/// cannot be.
package enum FileKind: Sendable, Equatable {
    case regularFile, directory, fifo, socket, characterDevice, blockDevice, symbolicLink, other

    /// The kind in a `st_mode` value.
    package init(mode: UInt32) {
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFREG): self = .regularFile
        case UInt32(S_IFDIR): self = .directory
        case UInt32(S_IFIFO): self = .fifo
        case UInt32(S_IFSOCK): self = .socket
        case UInt32(S_IFCHR): self = .characterDevice
        case UInt32(S_IFBLK): self = .blockDevice
        case UInt32(S_IFLNK): self = .symbolicLink
        default: self = .other
        }
    }

    /// "a regular file", "a FIFO (named pipe)", … for messages.
    package var description: String {
        switch self {
        case .regularFile: "a regular file"
        case .directory: "a directory"
        case .fifo: "a FIFO (named pipe)"
        case .socket: "a socket"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .symbolicLink: "a symbolic link"
        case .other: "neither a file nor a directory"
        }
    }
}

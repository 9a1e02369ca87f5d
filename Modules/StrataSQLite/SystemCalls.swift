import Foundation

/// The POSIX and Foundation calls of this engine that take C strings or pointers, behind
/// safe signatures.
///
/// Walled file (strict memory safety): each function converts its `String` arguments and C
/// string results here, so the callers (store creation, the file probe) stay safe Swift.
enum SystemCalls {
    /// `link(2)`: 0, or the `errno` of the failure.
    static func link(_ existing: String, _ new: String) -> Int32 {
        unsafe Glibc.link(existing, new) == 0 ? 0 : errno
    }

    /// `unlink(2)`, ignoring failure.
    static func unlink(_ path: String) {
        _ = unsafe Glibc.unlink(path)
    }

    /// Opens `directory` and `fsync`s it (best effort: some file systems refuse).
    static func syncDirectory(_ directory: String) {
        let descriptor = unsafe Glibc.open(directory, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        Glibc.close(descriptor)
    }

    /// The system's text for an `errno` value (`strerror`).
    static func errorText(_ code: Int32) -> String {
        unsafe String(cString: strerror(code))
    }

    /// Whether something exists at `path` (following symbolic links) and is a directory; nil
    /// when nothing exists there.
    static func isDirectory(atPath path: String) -> Bool? {
        var isDirectory: ObjCBool = false
        guard unsafe FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        return isDirectory.boolValue
    }
}

import Foundation

/// The POSIX and Foundation calls of this engine that take C strings or pointers, behind
/// safe signatures.
///
/// Walled file (strict memory safety): each function converts its `String` arguments and C
/// string results here, so the callers (the file lock, the file check) stay safe Swift.
enum SystemCalls {
    /// `open(2)`: a descriptor, or -1 with `errno` set.
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        unsafe Glibc.open(path, flags, mode)
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

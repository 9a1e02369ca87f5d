// Walled file (strict memory safety): libpq's parse of a connection string.
import CPostgres

/// libpq's reading of a connection URL or key-value string (`PQconninfoParse`).
enum PGConnectionInfo {
    /// The keywords the string sets, in libpq's order; nil when libpq cannot parse it (its message
    /// is dropped: for some syntax errors it repeats the password).
    static func parse(_ conninfo: String) -> [(keyword: String, value: String)]? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = unsafe PQconninfoParse(conninfo, &error) else {
            unsafe PQfreemem(error)
            return nil
        }
        defer { unsafe PQconninfoFree(options) }
        var parsed: [(keyword: String, value: String)] = []
        var option = unsafe options
        while let keyword = unsafe option.pointee.keyword {
            if let value = unsafe option.pointee.val {
                parsed.append((unsafe String(cString: keyword), unsafe String(cString: value)))
            }
            unsafe option += 1
        }
        return parsed
    }
}

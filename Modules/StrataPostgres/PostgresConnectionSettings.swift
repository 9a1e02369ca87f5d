import Foundation
import StrataStorage

/// How the engine reaches the server: libpq's keywords for every new connection, and the
/// store's location without the password (for messages and ``EngineConfiguration/location``).
struct PostgresConnectionSettings: Sendable {
    /// The keywords passed to `PQconnectdbParams`: the URL's, then the engine's overrides.
    let keywords: [(String, String)]
    /// `postgresql://user@host:port/db?…&schema=S`, never with the password.
    let location: String
    /// The password, when the URL holds one: removed from any message that might echo it.
    let secret: String?
    /// The store's schema.
    let schema: String

    /// Reads `url` with libpq and adds the engine's timeouts.
    /// - Throws: `.misuse` for a URL libpq cannot parse or a bad schema name.
    init(url: String, schema: String, options: PostgresOptions) throws(StrataError) {
        guard let parsed = PGConnectionInfo.parse(url) else {
            throw .misuse(
                """
                the PostgreSQL URL cannot be parsed by libpq (it is not \
                postgresql://user@host:port/database?param=value \
                nor key=value pairs); check its syntax and percent-escapes
                """)
        }
        self.schema = schema
        secret = parsed.first { $0.keyword == "password" }?.value
        location = Self.redactedLocation(parsed, schema: schema)
        try Self.validateSchemaName(schema, location: location)
        try options.validate(store: location)
        let options = options.boundedTimeouts
        var keywords = parsed.filter {
            !["connect_timeout", "application_name", "client_encoding", "options"].contains($0.keyword)
        }
        .map { ($0.keyword, $0.value) }
        // libpq counts whole seconds (an int) and waits at least 2.
        let connectSeconds = max(2, (Self.milliseconds(options.connectTimeout) + 999) / 1000)
        keywords.append(("connect_timeout", String(connectSeconds)))
        keywords.append(("application_name", options.applicationName))
        keywords.append(("client_encoding", "UTF8"))
        keywords.append(("keepalives", "1"))
        keywords.append(("keepalives_idle", "10"))
        keywords.append(("keepalives_interval", "5"))
        keywords.append(("keepalives_count", "3"))
        // On TCP, data unacknowledged this long drops the connection (a vanished server).
        let unacknowledged = min(Self.milliseconds(options.statementTimeout) + 5000, Self.largestMilliseconds)
        keywords.append(("tcp_user_timeout", String(unacknowledged)))
        let userOptions = parsed.first { $0.keyword == "options" }?.value
        let serverOptions =
            """
            -c statement_timeout=\(Self.milliseconds(options.statementTimeout)) -c \
            lock_timeout=\(Self.milliseconds(options.lockTimeout)) -c idle_in_transaction_session_timeout=0
            """
        keywords.append(("options", [userOptions, serverOptions].compactMap { $0 }.joined(separator: " ")))
        self.keywords = keywords
    }

    /// The largest timeout the server and libpq take, in milliseconds (a C `int`; about 24.8 days).
    static let largestMilliseconds = Int64(Int32.max)

    /// `duration` in whole milliseconds, at least 1. Callers pass timeouts already bounded by
    /// ``PostgresOptions/boundedTimeouts``, so the product cannot overflow.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        return max(1, parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000)
    }

    /// Refuses schema names PostgreSQL would truncate, cannot hold, or keeps for itself, saying which.
    static func validateSchemaName(_ schema: String, location: String) throws(StrataError) {
        let bytes = schema.utf8.count
        let reason: String
        if bytes == 0 {
            reason = "it is empty; use 1 to 63 bytes"
        } else if bytes > 63 {
            reason = "it is \(bytes) bytes long, and PostgreSQL keeps only the first 63 bytes of a name; use 1 to 63"
        } else if schema.utf8.contains(0) {
            reason = "it contains a NUL character, which a PostgreSQL name cannot hold"
        } else if schema.hasPrefix("pg_") {
            reason = "names starting with pg_ are reserved for PostgreSQL's system schemas"
        } else if schema == "information_schema" {
            reason = "information_schema is PostgreSQL's own schema of catalog views (the SQL standard's)"
        } else {
            return
        }
        throw .misuse(
            "\(String(reflecting: schema)) cannot be a store's schema: \(reason). Choose another name "
                + "(store \(location))")
    }

    /// The URL without its password, with the schema: a valid Foundation URL.
    static func redactedLocation(_ parsed: [(keyword: String, value: String)], schema: String) -> String {
        var values: [String: String] = [:]
        for (keyword, value) in parsed { values[keyword] = value }
        let user = values["user"].map { encode($0) + "@" } ?? ""
        let host = values["host"] ?? values["hostaddr"] ?? ""
        var query: [(String, String)] = []
        var authority = user
        if host.isEmpty || host.contains("/") || host.contains(",") {
            if !host.isEmpty { query.append(("host", host)) }
            if let port = values["port"] { query.append(("port", port)) }
        } else {
            authority += host.contains(":") ? "[\(host)]" : encode(host)
            if let port = values["port"], Int(port) != nil {
                authority += ":\(port)"
            } else if let port = values["port"] {
                query.append(("port", port))
            }
        }
        let skipped: Set = ["password", "user", "host", "hostaddr", "port", "dbname", "passfile"]
        for (keyword, value) in parsed where !skipped.contains(keyword) { query.append((keyword, value)) }
        query.append(("schema", schema))
        let database = values["dbname"].map(encode) ?? ""
        let parameters = query.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
        return "postgresql://\(authority)/\(database)?\(parameters)"
    }

    private static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// The location of a PostgreSQL configuration: the URL without its password (issue 17).
enum PostgresLocation {
    /// The redacted URL with `schema`, or a placeholder naming the schema when the URL does not
    /// parse (opening then throws `.misuse`).
    static func url(redacting url: String, schema: String) -> URL {
        if let parsed = PGConnectionInfo.parse(url),
            let location = URL(string: PostgresConnectionSettings.redactedLocation(parsed, schema: schema))
        {
            return location
        }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let name = schema.addingPercentEncoding(withAllowedCharacters: allowed) ?? "store"
        return URL(string: "postgresql://unparsable-url/?schema=\(name)") ?? URL(fileURLWithPath: "/")
    }
}

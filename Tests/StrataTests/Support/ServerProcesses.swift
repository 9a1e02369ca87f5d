import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The processes of a private PostgreSQL server, for tests that make it sick: stop (SIGSTOP) and
/// resume its backends or the whole server, or terminate the backends of the writer processes
/// (`application_name` "strata-crash-writer <pid>"). Signals go only to this server's processes.
struct ServerProcesses: Sendable {
    let url: String
    /// The cluster's data directory, read from its pg_ctl script (`-D <data>`).
    let dataDirectory: String

    init(server: PrivatePostgresServer) throws {
        url = server.url
        let script = try String(contentsOfFile: server.ctl, encoding: .utf8)
        guard let match = script.firstMatch(of: /-D (\S+)/) else {
            throw PostgresSQLError(message: "no -D <data> in \(server.ctl): \(script)")
        }
        dataDirectory = String(match.output.1)
    }

    /// The backends serving the writer processes.
    func writerBackends() -> [pid_t] {
        let rows =
            (try? PostgresSQL(url: url).execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'strata-crash-writer %'")) ?? []
        return rows.compactMap { $0.first.flatMap { $0 }.flatMap { pid_t($0) } }
    }

    /// Stops every writer backend; returns them, for ``resume(_:)``.
    func stopWriterBackends() -> [pid_t] {
        let backends = writerBackends()
        return backends.filter { kill($0, SIGSTOP) == 0 }
    }

    /// Terminates every writer backend; returns how many.
    func terminateWriterBackends() -> Int {
        let value = try? PostgresSQL(url: url).value(
            """
            SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
            WHERE application_name LIKE 'strata-crash-writer %') AS ended
            """)
        return value.flatMap { $0 }.flatMap { Int($0) } ?? 0
    }

    /// Stops the postmaster, then every process it started (backends, checkpointer, WAL writer…);
    /// returns them, for ``resume(_:)``.
    func stopServer() -> [pid_t] {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = pid_t(line)
        else { return [] }
        guard kill(postmaster, SIGSTOP) == 0 else { return [] }
        return [postmaster] + children(of: postmaster).filter { kill($0, SIGSTOP) == 0 }
    }

    /// Resumes stopped processes.
    func resume(_ processes: [pid_t]) {
        for process in processes { kill(process, SIGCONT) }
    }

    /// The processes whose parent is `parent` (from /proc/<pid>/stat).
    private func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }
}

import Foundation

/// The machine and software a run measured, for the report.
struct MachineInfo: Codable, Sendable {
    var processors: Int
    var cpuModel: String
    var memoryGiB: Double
    var operatingSystem: String
    var kernel: String
    var sqliteVersion: String
    var lmdbVersion: String
    /// The PostgreSQL server's and libpq's versions, when PostgreSQL was measured.
    var postgresVersion: String?
    /// `release` or `debug`: how `strata-bench` was compiled.
    var build: String

    static func current() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? ""
        #if DEBUG
            let build = "debug"
        #else
            let build = "release"
        #endif
        return MachineInfo(
            processors: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: field("model name", in: cpuinfo, separator: ":") ?? "unknown CPU",
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30),
            operatingSystem: field("PRETTY_NAME", in: osRelease, separator: "=")?.trimmingCharacters(in: ["\""])
                ?? "Linux",
            kernel: kernel.trimmingCharacters(in: .whitespacesAndNewlines),
            sqliteVersion: RawSQLite.libraryVersion, lmdbVersion: RawLMDB.libraryVersion,
            postgresVersion: BenchmarkPostgres.serverVersion.map { "\($0) (libpq \(PGLink.libraryVersion))" },
            build: build)
    }

    /// One line: "2 × Intel(R) Xeon(R) Processor, 23.5 GiB RAM, Ubuntu 24.04 (Linux 6.8), …".
    var summary: String {
        "\(processors) × \(cpuModel), \(format(memoryGiB, digits: 1)) GiB RAM; \(operatingSystem), Linux \(kernel); "
            + "SQLite \(sqliteVersion), \(lmdbVersion)"
            + (postgresVersion.map { ", PostgreSQL \($0)" } ?? "") + "; \(build) build"
    }

    /// The value of the first `key<separator>value` line.
    private static func field(_ key: String, in text: String, separator: Character) -> String? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: separator, maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == key {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

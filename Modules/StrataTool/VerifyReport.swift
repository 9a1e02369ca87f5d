/// What `strata verify` reports: each problem found, none when the store is sound. Encoded as is
/// for `--json`.
struct VerifyReport: Codable, Sendable, Equatable {
    var engine: String
    var location: String
    /// Whether no check found a problem; the exit status is 0 only then.
    var isSound: Bool { problems.isEmpty }
    /// The checks that ran, in order.
    var checks: [String]
    /// Every problem found, one line each.
    var problems: [String]

    private enum CodingKeys: String, CodingKey {
        case engine, location, checks, problems, isSound
    }

    init(engine: String, location: String, checks: [String], problems: [String]) {
        self.engine = engine
        self.location = location
        self.checks = checks
        self.problems = problems
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        engine = try container.decode(String.self, forKey: .engine)
        location = try container.decode(String.self, forKey: .location)
        checks = try container.decode([String].self, forKey: .checks)
        problems = try container.decode([String].self, forKey: .problems)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(engine, forKey: .engine)
        try container.encode(location, forKey: .location)
        try container.encode(checks, forKey: .checks)
        try container.encode(problems, forKey: .problems)
        try container.encode(isSound, forKey: .isSound)
    }

    /// The report as lines for a person.
    var text: String {
        var lines = ["verified \(location) (\(engine)): " + checks.joined(separator: ", ")]
        if problems.isEmpty {
            lines.append("sound: no problem found")
        } else {
            lines.append("NOT SOUND: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
            lines += problems.map { "- " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}

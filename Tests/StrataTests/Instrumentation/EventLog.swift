import Foundation
import Strata
import Synchronization

/// Every event a container's hook received, in order, for tests to assert on.
final class EventLog: Sendable {
    private let events = Mutex<[StrataEvent]>([])

    /// A hook that appends to this log.
    var hook: Instrumentation {
        Instrumentation { [self] event in events.withLock { $0.append(event) } }
    }

    var all: [StrataEvent] { events.withLock { $0 } }

    var engineCalls: [StrataEvent.EngineCall] {
        all.compactMap { if case .engineCall(let call) = $0 { call } else { nil } }
    }

    var commits: [StrataEvent.Commit] {
        all.compactMap { if case .commit(let commit) = $0 { commit } else { nil } }
    }

    var migrations: [MigrationProgress] {
        all.compactMap { if case .migration(let progress) = $0 { progress } else { nil } }
    }

    var trims: [StrataEvent.HistoryTrim] {
        all.compactMap { if case .historyTrimmed(let trim) = $0 { trim } else { nil } }
    }

    /// The unit-of-work events, each as a short text: `conflict 1`, `retry 2 conflict`,
    /// `exhausted 3`.
    var unitOfWork: [String] {
        all.compactMap { event in
            switch event {
            case .conflict(let attempt, let conflicts): "conflict \(attempt) \(conflicts.isEmpty ? "none" : "rows")"
            case .retry(let attempt, _, let error): "retry \(attempt) \(Self.kind(error))"
            case .retriesExhausted(let attempts, let errors): "exhausted \(attempts) \(errors.count)"
            default: nil
            }
        }
    }

    func clear() {
        events.withLock { $0 = [] }
    }

    private static func kind(_ error: StrataError) -> String {
        switch error {
        case .conflict: "conflict"
        case .busy: "busy"
        default: "other"
        }
    }
}

extension TestStore {
    /// Opens the store with the fixture schema and `log`'s hook.
    func open(reportingTo log: EventLog, schema: Schema = TestModels.schema) throws -> PersistentContainer {
        try PersistentContainer(schema: schema, engine: configuration, instrumentation: log.hook)
    }
}

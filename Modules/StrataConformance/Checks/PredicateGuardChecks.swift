import Foundation
import Strata
import Synchronization

/// Phantoms, stated by behaviour: a decision that rests on a query ("insert an admin only if
/// there is none") is not protected by snapshot isolation, nor by `requireUnchanged` (the row
/// that breaks it does not exist yet); `requireUnchangedResults(of:)` guards the query's result
/// set and closes it.
enum PredicateGuardChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Isolation", "phantom: two units of work that each find no admin and insert one both commit",
            phantomHappens),
        ConformanceCheck(
            "Isolation",
            "requireUnchangedResults turns the phantom into a conflict naming the new row; the retry leaves one admin",
            guardPrevents),
        ConformanceCheck(
            "Isolation",
            """
            requireUnchangedResults detects a matching row changed, deleted or no longer matching and a row that \
            starts to match, and nothing outside the set
            """,
            guardDetectsChanges),
        ConformanceCheck(
            "Isolation",
            """
            requireUnchangedResults alone is checked at save, ignores the context's own changes, is cleared by save \
            and rollback, and refuses misuse
            """,
            guardRules),
    ]

    /// The admins of one org.
    static func admins(of org: Int) -> FetchRequest<KitMember> {
        FetchRequest(predicate: #Predicate { $0.org == org && $0.isAdmin }, sortBy: [SortDescriptor(\.name)])
    }

    /// Inserts an admin named `name` for `org` and saves, if the org has none; with `guarded`,
    /// the (empty) set of its admins must still be empty at save. `meanwhile` runs after the
    /// decision and before the save (another writer). Returns whether it inserted one.
    @discardableResult
    static func insertAdminIfNone(
        _ context: ObjectContext, org: Int, name: String, guarded: Bool, meanwhile: () throws -> Void = {}
    ) throws -> Bool {
        let request = admins(of: org)
        guard try context.fetch(request).isEmpty else { return false }
        if guarded { try context.requireUnchangedResults(of: request) }
        try meanwhile()
        let admin = KitMember(context: context)
        admin.org = org
        admin.name = name
        admin.isAdmin = true
        try context.save()
        return true
    }

    static func adminNames(_ container: PersistentContainer, org: Int) async throws -> [String] {
        try await container.read { try $0.fetch(admins(of: org)).map(\.name) }
    }

    static func phantomHappens(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let context = container.newBackgroundContext()
        _ = try await context.perform {
            try insertAdminIfNone(context, org: 1, name: "first", guarded: false) {
                try IsolationChecks.commitMeanwhile(kit, container, "the other unit of work") {
                    _ = try insertAdminIfNone($0, org: 1, name: "second", guarded: false)
                }
            }
        }
        // Documents the isolation level: each saw no admin; neither wrote a row the other read.
        try kit.expectEqual(
            try await adminNames(container, org: 1), ["first", "second"], "admins of org 1 without a guard (phantom)")
    }

    static func guardPrevents(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let context = container.newBackgroundContext()
        let conflict = try await context.perform { () -> StrataError? in
            do {
                try insertAdminIfNone(context, org: 1, name: "first", guarded: true) {
                    try IsolationChecks.commitMeanwhile(kit, container, "the other unit of work") {
                        _ = try insertAdminIfNone($0, org: 1, name: "second", guarded: true)
                    }
                }
                return nil
            } catch let error as StrataError {
                return error
            }
        }
        guard case .conflict(let rows)? = conflict else {
            throw kit.fail("the second insert gave \(conflict.map { "\($0)" } ?? "no error"), expected .conflict")
        }
        let second = try await container.read { try $0.fetch(admins(of: 1)).map(\.objectID) }
        try kit.expectEqual(rows.map(\.objectID), second, "the conflict names the admin that appeared")
        try kit.expectEqual(rows.map(\.expectedVersion), [0], "the new admin's read version (0: not there)")
        try kit.expectEqual(rows.map(\.storedVersion), [1], "the new admin's stored version")
        try kit.expectEqual(try await adminNames(container, org: 1), ["second"], "admins: the conflict wrote nothing")

        // The same race through performUnitOfWork: the retry sees the other admin and inserts none.
        let attempts = Atomic<Int>(0)
        let inserted = try await container.performUnitOfWork { context -> Bool in
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            return try insertAdminIfNone(context, org: 2, name: "retried", guarded: true) {
                guard attempt == 1 else { return }
                try IsolationChecks.commitMeanwhile(kit, container, "the other unit of work") {
                    _ = try insertAdminIfNone($0, org: 2, name: "other", guarded: true)
                }
            }
        }
        try kit.expect(!inserted, "the retried unit of work found the other admin and inserted none")
        try kit.expectEqual(attempts.load(ordering: .relaxed), 2, "attempts: the conflict, then the retry")
        try kit.expectEqual(try await adminNames(container, org: 2), ["other"], "admins of org 2 after the retry")
    }

    /// Guards the admins of org 3 in a fresh context, lets `change` commit meanwhile, then saves
    /// an unrelated insert; returns the conflict's rows, or nil when the save went through.
    static func guardedSave(
        _ kit: ConformanceHarness, _ container: PersistentContainer, _ what: String,
        _ change: @escaping @Sendable (ObjectContext) throws -> Void
    ) async throws -> [VersionConflict]? {
        let context = container.newBackgroundContext()
        return try await context.perform { () -> [VersionConflict]? in
            try context.requireUnchangedResults(of: admins(of: 3))
            try IsolationChecks.commitMeanwhile(kit, container, what, change)
            let visitor = KitMember(context: context)
            visitor.org = 9
            visitor.name = "visitor"
            do {
                try context.save()
                return nil
            } catch StrataError.conflict(let rows) {
                return rows
            }
        }
    }

    /// A member of org `org`, saved; returns its ID.
    static func member(_ container: PersistentContainer, _ name: String, org: Int, admin: Bool) async throws -> ObjectID
    {
        try await container.performUnitOfWork { context in
            let member = KitMember(context: context)
            member.name = name
            member.org = org
            member.isAdmin = admin
            try context.save()
            return member.objectID
        }
    }

    /// Changes one member and saves.
    static func change(
        _ id: ObjectID, _ body: @escaping @Sendable (KitMember) -> Void
    )
        -> @Sendable (ObjectContext)
        throws -> Void
    {
        { context in
            body(try context.existingObject(with: id, as: KitMember.self))
            try context.save()
        }
    }

    static func guardDetectsChanges(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let alice = try await member(container, "alice", org: 3, admin: true)
        let bob = try await member(container, "bob", org: 3, admin: false)
        let carol = try await member(container, "carol", org: 4, admin: true)

        func expectConflict(
            _ rows: [VersionConflict]?, _ id: ObjectID, read: Int64, stored: Int64?, _ what: String
        ) throws {
            guard let rows else { throw kit.fail("\(what): the guarded save went through, expected .conflict") }
            try kit.expectEqual(rows.map(\.objectID), [id], "\(what): the rows the conflict names")
            try kit.expectEqual(rows.map(\.expectedVersion), [read], "\(what): the version read")
            try kit.expectEqual(rows.map(\.storedVersion), [stored], "\(what): the version stored")
        }

        var rows = try await guardedSave(kit, container, "renaming the admin", change(alice) { $0.name = "alicia" })
        try expectConflict(rows, alice, read: 1, stored: 2, "a matching row changed")
        rows = try await guardedSave(kit, container, "making bob an admin", change(bob) { $0.isAdmin = true })
        try expectConflict(rows, bob, read: 0, stored: 2, "a row that starts to match")
        try await container.performUnitOfWork(change(bob) { $0.isAdmin = false })
        rows = try await guardedSave(
            kit, container, "renaming an admin of another org", change(carol) { $0.name = "c" })
        try kit.expect(rows == nil, "a change to a row outside the set conflicted: \(rows ?? [])")
        rows = try await guardedSave(kit, container, "renaming a non-admin", change(bob) { $0.name = "robert" })
        try kit.expect(rows == nil, "a change to a row of the org that does not match conflicted: \(rows ?? [])")
        rows = try await guardedSave(kit, container, "demoting the admin", change(alice) { $0.isAdmin = false })
        try expectConflict(rows, alice, read: 2, stored: 3, "a matching row that no longer matches")
        try await container.performUnitOfWork(change(alice) { $0.isAdmin = true })
        rows = try await guardedSave(kit, container, "deleting the admin") { context in
            context.delete(try context.existingObject(with: alice))
            try context.save()
        }
        try expectConflict(rows, alice, read: 4, stored: nil, "a matching row deleted")
        let visitors = try await container.read {
            try $0.count(for: FetchRequest<KitMember>(predicate: #Predicate { $0.org == 9 }))
        }
        try kit.expectEqual(visitors, 2, "visitors saved: only the two saves whose set did not change")
    }

    static func guardRules(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()

        // Outside perform, and for a class the schema does not list: misuse.
        let idle = container.newBackgroundContext()
        do {
            try idle.requireUnchangedResults(of: admins(of: 1))
            throw kit.fail("requireUnchangedResults outside perform did not throw")
        } catch StrataError.misuse(let message, _) {
            try kit.expect(message.contains("outside"), "the misuse message says outside perform: \(message)")
        }
        let stranger = try await idle.perform { () -> String? in
            do {
                try idle.requireUnchangedResults(of: FetchRequest<KitStranger>())
                return nil
            } catch StrataError.misuse(let message, _) {
                return message
            }
        }
        try kit.expect(stranger?.contains("Stranger") == true, "a class outside the schema: \(stranger ?? "no error")")

        // A save with only a guard checks it and writes nothing; a failed one keeps the guard
        // until rollback; a successful one clears it.
        let context = container.newBackgroundContext()
        let outcomes = try await context.perform { () -> [String] in
            var outcomes: [String] = []
            func save() {
                do {
                    try context.save()
                    outcomes.append("saved")
                } catch StrataError.conflict {
                    outcomes.append("conflict")
                } catch {
                    outcomes.append("\(error)")
                }
            }
            try context.requireUnchangedResults(of: admins(of: 5))
            save() // unchanged: saved
            try IsolationChecks.commitMeanwhile(kit, container, "adding an admin of org 5") {
                _ = try insertAdminIfNone($0, org: 5, name: "five", guarded: false)
            }
            save() // the guard was cleared by the save: nothing to check
            try context.requireUnchangedResults(of: admins(of: 6))
            try IsolationChecks.commitMeanwhile(kit, container, "adding an admin of org 6") {
                _ = try insertAdminIfNone($0, org: 6, name: "six", guarded: false)
            }
            save() // changed: conflict
            save() // the guard stays until rollback
            context.rollback()
            save() // cleared by rollback
            return outcomes
        }
        try kit.expectEqual(
            outcomes, ["saved", "saved", "conflict", "conflict", "saved"],
            "guard-only saves: unchanged, after a save, changed, again, after rollback")

        // The context's own unsaved admin is not part of the guarded set: its insert goes through.
        let own = container.newBackgroundContext()
        try await own.perform {
            let admin = KitMember(context: own)
            admin.org = 7
            admin.name = "mine"
            admin.isAdmin = true
            try own.requireUnchangedResults(of: admins(of: 7))
            try own.save()
        }
        try kit.expectEqual(try await adminNames(container, org: 7), ["mine"], "admins of org 7")
    }

    /// The peer's side of the multi-process race (`guard-race`): once `go` exists, for each org
    /// in `0..<orgs`, one unit of work that inserts an admin if the org has none (guarded or not).
    /// `ready` is created once the store is open. Returns the process's retry counts, as
    /// `conflicts=N retries=N` (a retry after `.busy` is counted in retries only).
    static func peerRace(
        engine: EngineConfiguration, orgs: Int, guarded: Bool, ready: URL, go: URL
    ) async throws -> String {
        let container = try PersistentContainer(schema: KitModels.schema, engine: engine)
        defer { container.close() }
        _ = FileManager.default.createFile(atPath: ready.path, contents: nil)
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: go.path) {
            guard Date() < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(1))
        }
        let name = "process \(ProcessInfo.processInfo.processIdentifier)"
        for org in 0..<orgs {
            try await container.performUnitOfWork { context in
                _ = try insertAdminIfNone(context, org: org, name: name, guarded: guarded)
            }
        }
        let counts = RetryStatistics.snapshot()
        return "conflicts=\(counts.conflicts) retries=\(counts.retries)"
    }

    /// The peer's count after a race (`guard-count`): how many of the orgs `0..<orgs` have no
    /// admin, exactly one, and more than one, as `none=N one=N more=N`.
    static func peerCount(engine: EngineConfiguration, orgs: Int) async throws -> String {
        let container = try PersistentContainer(schema: KitModels.schema, engine: engine)
        defer { container.close() }
        let counts = try await container.read { context in
            var perOrg: [Int: Int] = [:]
            for admin in try context.fetch(FetchRequest<KitMember>(predicate: #Predicate { $0.isAdmin })) {
                perOrg[admin.org, default: 0] += 1
            }
            return (0..<orgs).map { perOrg[$0, default: 0] }
        }
        return "none=\(counts.filter { $0 == 0 }.count) one=\(counts.filter { $0 == 1 }.count) "
            + "more=\(counts.filter { $0 > 1 }.count)"
    }
}

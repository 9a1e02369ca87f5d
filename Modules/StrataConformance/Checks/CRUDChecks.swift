import Foundation
import Strata

/// Every attribute type, with extreme and edge values, through insert, update and delete.
///
/// Stated semantics: `-0.0` reads back equal to `0.0` (engines may drop the sign); NaN is
/// refused at save with a validation error; strings keep their exact bytes.
enum CRUDChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("CRUD", "every attribute type round-trips with extreme values", roundTrip),
        ConformanceCheck("CRUD", "defaults and nil optionals round-trip", defaults),
        ConformanceCheck("CRUD", "updates and deletes are stored", updateAndDelete),
        ConformanceCheck("CRUD", "NaN is refused at save and nothing is written", nan),
        ConformanceCheck("CRUD", "strings keep their exact bytes (precomposed and decomposed differ)", exactStrings),
    ]

    static let bigData = Data((0..<(1 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    static let oddText = "😀 e\u{301} é \u{0} \u{10FFFF} 中文 \"quoted\" 'single' %_"
    static let early = Date(timeIntervalSince1970: -2_208_988_800.25)

    static func roundTrip(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let uuid = UUID()
        let variants: [(Int, Int64, Double)] = [
            (.min, .min, -.infinity), (.max, .max, .infinity), (0, -1, -0.0), (1, 1, .leastNonzeroMagnitude),
            (-1, 0, -.greatestFiniteMagnitude),
        ]
        let ids = try await container.performUnitOfWork { context in
            try variants.map { int, int64, double in
                let sample = KitSample(context: context)
                sample.flag = int64 != 0
                sample.int = int
                sample.int64 = int64
                sample.double = double
                sample.text = oddText
                sample.date = early
                sample.data = bigData
                sample.uuid = uuid
                sample.optionalFlag = false
                sample.optionalInt = int
                sample.optionalInt64 = int64
                sample.optionalDouble = double
                sample.optionalText = ""
                sample.optionalDate = Date(timeIntervalSinceReferenceDate: 1e-6)
                sample.optionalData = Data()
                sample.optionalUUID = uuid
                try context.obtainPermanentIDs(for: [sample])
                return sample.objectID
            }.also { _ in try context.save() }
        }
        for (id, (int, int64, double)) in zip(ids, variants) {
            let values = try await container.read { context in
                let s = try context.existingObject(with: id, as: KitSample.self)
                return [
                    s.flag == (int64 != 0), s.int == int, s.int64 == int64, s.double == double,
                    s.text.utf8.elementsEqual(oddText.utf8),
                    s.date == early, s.data == bigData, s.uuid == uuid, s.optionalFlag == false, s.optionalInt == int,
                    s.optionalInt64 == int64, s.optionalDouble == double, s.optionalText == "",
                    s.optionalDate == Date(timeIntervalSinceReferenceDate: 1e-6),
                    s.optionalData == Data(), s.optionalUUID == uuid,
                ]
            }
            let names = [
                "flag", "int", "int64", "double", "text", "date", "data", "uuid", "optionalFlag", "optionalInt",
                "optionalInt64", "optionalDouble", "optionalText", "optionalDate", "optionalData", "optionalUUID",
            ]
            let wrong = zip(names, values).filter { !$0.1 }.map(\.0)
            try kit.expect(wrong.isEmpty, "values that did not round-trip for (\(int), \(int64), \(double)): \(wrong)")
        }
    }

    static func defaults(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.performUnitOfWork { context in
            let sample = KitSample(context: context)
            try context.save()
            return sample.objectID
        }
        let ok = try await container.read { context in
            let s = try context.existingObject(with: id, as: KitSample.self)
            return !s.flag && s.int == 0 && s.int64 == 0 && s.double == 0 && s.text == "" && s.data.isEmpty
                && s.date == Date(timeIntervalSinceReferenceDate: 0) && s.optionalFlag == nil && s.optionalInt == nil
                && s.optionalInt64 == nil && s.optionalDouble == nil && s.optionalText == nil && s.optionalDate == nil
                && s.optionalData == nil && s.optionalUUID == nil
        }
        try kit.expect(ok, "a sample saved with defaults did not read back with those defaults")
    }

    static func updateAndDelete(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let keep = try await container.makeAccount("Keep", balance: 1, note: "before")
        let drop = try await container.makeAccount("Drop")
        try await container.performUnitOfWork { context in
            let account = try context.existingObject(with: keep, as: KitAccount.self)
            account.balance = Int64.min
            account.note = nil
            account.name = "Kept"
            context.delete(try context.existingObject(with: drop))
            try context.save()
        }
        let names = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>()).map { "\($0.name)|\($0.balance)|\($0.note ?? "nil")" }
        }
        try kit.expectEqual(names, ["Kept|\(Int64.min)|nil"], "accounts after update and delete")
        let error = try await kit.expectStrataError("reading a deleted object") {
            _ = try await container.read { try $0.existingObject(with: drop).objectID }
        }
        try kit.expectEqual(error, .objectNotFound(drop), "the error for a deleted object")
    }

    static func nan(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let context = container.newBackgroundContext()
        let error = try await kit.expectStrataError("saving NaN") {
            try await context.perform {
                KitSample(context: context).optionalDouble = .nan
                try context.save()
            }
        }
        guard case .validation(let issues) = error else { throw kit.fail("expected .validation, got \(error)") }
        try kit.expectEqual(issues.map(\.property), ["optionalDouble"], "the property named by the validation error")
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitSample>()) }, 0, "samples stored")
    }

    static func exactStrings(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let composed = "\u{E9}"
        let decomposed = "e\u{301}"
        _ = try await container.makeAccount(composed)
        _ = try await container.makeAccount(decomposed)
        let found = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == decomposed })).map {
                Array($0.name.unicodeScalars)
            }
        }
        try kit.expectEqual(found, [Array(decomposed.unicodeScalars)], "accounts named with the decomposed é")
    }
}

extension Array {
    /// Runs `body` on the array and returns the array: keeps a map-then-save readable.
    func also(_ body: ([Element]) throws -> Void) rethrows -> [Element] {
        try body(self)
        return self
    }
}

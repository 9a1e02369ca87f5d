import Foundation
import Strata
import Testing

@Suite("store files")
struct StoreFileTests {
    @Test("a store reopens with its data, IDs and every attribute type intact", arguments: EngineKind.allCases)
    func reopenKeepsData(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let uuid = UUID()
        let bigData = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let early = Date(timeIntervalSince1970: -1_234_567_890.123_456)
        let (storeID, sampleID, accountID): (UUID, ObjectID, ObjectID)
        do {
            let container = try store.open()
            (sampleID, accountID) = try await container.performUnitOfWork { context in
                let sample = Sample(context: context)
                sample.flag = true
                sample.int = Int.min
                sample.int64 = Int64.max
                sample.double = -.infinity
                sample.text = "😀 e\u{301} \u{0}"
                sample.date = early
                sample.data = bigData
                sample.uuid = uuid
                sample.optionalInt64 = Int64.min
                sample.optionalDouble = .greatestFiniteMagnitude
                sample.optionalText = ""
                sample.optionalData = Data()
                sample.optionalDate = Date(timeIntervalSinceReferenceDate: 0.000_001)
                let account = Account(context: context)
                account.name = "Kept"
                let entry = Entry(context: context)
                entry.account = account
                try context.save()
                return (sample.objectID, account.objectID)
            }
            storeID = container.storeIdentifier
        }
        let reopened = try store.open()
        #expect(reopened.storeIdentifier == storeID)
        let context = reopened.newBackgroundContext()
        let matches = try await context.perform {
            let sample = try context.existingObject(with: sampleID, as: Sample.self)
            let account = try context.existingObject(with: accountID, as: Account.self)
            return sample.flag && sample.int == Int.min && sample.int64 == .max && sample.double == -.infinity
                && sample.text.utf8.elementsEqual("😀 e\u{301} \u{0}".utf8) && sample.date == early && sample.data == bigData
                && sample.uuid == uuid && sample.optionalFlag == nil && sample.optionalInt == nil
                && sample.optionalInt64 == .min && sample.optionalDouble == .greatestFiniteMagnitude
                && sample.optionalText == "" && sample.optionalData == Data() && sample.optionalUUID == nil
                && sample.optionalDate == Date(timeIntervalSinceReferenceDate: 0.000_001)
                && account.name == "Kept" && account.entries.count == 1
        }
        #expect(matches)
        // Keys are never reused after reopening.
        let newKey = try await reopened.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "New"
            try context.save()
            return account.objectID.primaryKey!
        }
        #expect(newKey > accountID.primaryKey!)
    }

    @Test("a garbage file or a 0-byte file gives a typed error at open", arguments: EngineKind.allCases, ["garbage", "empty"])
    func badFiles(kind: EngineKind, content: String) throws {
        let store = try TestStore(kind)
        let bytes = content == "garbage" ? Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }) : Data()
        let location = store.configuration.location
        if kind == .sqlite {
            try bytes.write(to: location)
        } else {
            try FileManager.default.createDirectory(at: location, withIntermediateDirectories: true)
            try bytes.write(to: location.appendingPathComponent("data.mdb"))
        }
        let error = #expect(throws: StrataError.self) { _ = try store.open() }
        switch error {
        case .notAStore?, .storeCorrupt?: break
        default: Issue.record("expected notAStore or storeCorrupt, got \(String(describing: error))")
        }
        // The file is left untouched.
        let path = kind == .sqlite ? location : location.appendingPathComponent("data.mdb")
        #expect(try Data(contentsOf: path) == bytes)
    }

    @Test("opening a store with another schema version is a typed error", arguments: EngineKind.allCases)
    func schemaVersionMismatch(kind: EngineKind) throws {
        let store = try TestStore(kind)
        _ = try store.open()
        let newer = try Schema(version: 2, [Account.self, Entry.self, Tag.self, Sample.self, Owner.self, Pet.self, Passport.self, Seat.self])
        let error = #expect(throws: StrataError.self) { _ = try store.open(schema: newer) }
        #expect(error == .schemaMismatch(storeVersion: 1, modelVersion: 2))
    }
}

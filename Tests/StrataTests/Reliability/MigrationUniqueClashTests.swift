import Foundation
import StrataStorage
import Testing

/// How a migration's refusal of a unique constraint names the clashing rows (the engines' part,
/// every engine, is the kit's "unique constraint over clashing rows" checks).
@Suite("a migration's unique clash: the message")
struct MigrationUniqueClashTests {
    @Test("rows in key order, the first five named and the rest counted; one or several attributes")
    func message() {
        #expect(
            MigrationUniqueClash.message(entity: "Note", attributes: ["title"], keys: [4, 1], values: ["'Dune'"])
                == "rows 1 and 4 of Note hold the same title ('Dune')")
        #expect(
            MigrationUniqueClash.message(
                entity: "Person", attributes: ["name", "city", "born"], keys: [9, 7, 1, 2, 3, 5, 8],
                values: ["'Ada'", "'London'", "1815"])
                == "rows 1, 2, 3, 5, 7 and 2 more of Person hold the same name, city and born ('Ada', 'London', 1815)")
        #expect(
            MigrationUniqueClash.message(entity: "Note", attributes: ["title"], keys: [3], values: ["'x'"])
                == "row 3 of Note holds the same title ('x')")
    }

    @Test("the refusal reads as a migration's, with the cause; a save's clash keeps its own wording")
    func description() {
        let cause = MigrationUniqueClash.cause(
            engine: "sqlite", code: 2067, entity: "Note", attributes: ["title"], keys: [1, 4], values: ["'Dune'"])
        let refusal = StrataError.constraintViolation(entity: "Note", attributes: ["title"], native: cause)
        #expect(refusal.description.hasPrefix("Uniqueness constraint on Note(title) cannot be added"))
        #expect(refusal.description.contains("previous model version"))
        #expect(refusal.description.contains("\"rows 1 and 4 of Note hold the same title ('Dune')\""))
        #expect(refusal.native?.message == "rows 1 and 4 of Note hold the same title ('Dune')")
        #expect(refusal.native?.operation == MigrationUniqueClash.operation)
        #expect(refusal == .constraintViolation(entity: "Note", attributes: ["title"]))
        let save = StrataError.constraintViolation(entity: "Note", attributes: ["title"])
        #expect(save.description.contains("choose different values"))
        #expect(!save.description.contains("cannot be added"))
    }

    @Test("a native message is quoted with its apostrophes as they are; quotes, backslashes and controls escaped")
    func nativeQuoting() {
        let native = NativeError(engine: "e", code: 1, message: "it's 'x' \"y\" \\ \n\u{1}é")
        #expect(native.description == #"e code 1 "it's 'x' \"y\" \\ \n\u{1}é""#)
    }
}

import Foundation
import StrataStorage
import Testing

@testable import StrataPostgres

/// The engine's pure parts, without a server: the text escape (D1), the binary parameter
/// encoding, SQLSTATE packing, error mapping and the redacted location.
@Suite("PostgresEngine codecs and errors")
struct PostgresCodecTests {
    @Test("the text escape round-trips, never emits 0x00, and keeps byte order and prefixes")
    func textEscape() {
        let alphabet: [String] = ["\u{0}", "\u{1}", "\u{2}", "\u{3}", "a", "b", "é", "😀", "\u{10FFFF}"]
        var generator = SystemRandomNumberGenerator()
        func random() -> String {
            (0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
                .joined()
        }
        for _ in 0..<5000 {
            let a = random()
            let b = random()
            let encodedA = PostgresTextEscape.encode(a)
            let encodedB = PostgresTextEscape.encode(b)
            #expect(PostgresTextEscape.decode(encodedA) == a)
            #expect(!encodedA.contains(0))
            #expect(
                encodedA.lexicographicallyPrecedes(encodedB) == Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)))
            #expect(encodedA.starts(with: encodedB) == Array(a.utf8).starts(with: Array(b.utf8)))
        }
        #expect(PostgresTextEscape.encode("a\u{0}\u{1}b") == [0x61, 0x01, 0x01, 0x01, 0x02, 0x62])
        // A control byte written by hand in psql reads back literally.
        #expect(PostgresTextEscape.decode([0x01, 0x41]) == "\u{1}A")
        #expect(PostgresTextEscape.decode([0xFF]) == nil)
        #expect(!PostgresTextEscape.containsIsExact("\u{2}x"))
        #expect(PostgresTextEscape.containsIsExact("x\u{0}"))
    }

    @Test("a text is read straight from the buffer only when every byte is ASCII above the escape bytes")
    func plainTextCheck() {
        // Every byte value at every position of texts of 1 to 25 bytes ("a" elsewhere): the first
        // word, a later one and the bytes after the last whole word, against a byte-by-byte check.
        // The empty text after.
        var mismatches: [String] = []
        for length in 1...25 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: 0x61, count: length)
                    bytes[position] = byte
                    let expected = byte < 0x80 && byte > PostgresTextEscape.highestEscapedByte
                    if PGResult.isPlainText(bytes) != expected {
                        mismatches.append("0x\(String(byte, radix: 16)) at \(position) of \(length)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty)
        #expect(PGResult.isPlainText([]))
        // Two bytes below 0x02 in one word, and 0x02 beside 0x01 (a borrow must not hide either).
        #expect(!PGResult.isPlainText([0x61, 0x00, 0x01, 0x61, 0x61, 0x61, 0x61, 0x61]))
        #expect(!PGResult.isPlainText([0x02, 0x01, 0x61, 0x61, 0x61, 0x61, 0x61, 0x61]))
        #expect(PGResult.isPlainText([0x02, 0x02, 0x7F, 0x7F, 0x02, 0x61, 0x61, 0x61, 0x02]))
    }

    @Test("parameters are sent in PostgreSQL's binary formats")
    func binaryParameters() {
        #expect(PGParameter.int8(1).encoded() == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(PGParameter.int8(-2).encoded() == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE])
        #expect(PGParameter.float8(-0.0).encoded() == [0x80, 0, 0, 0, 0, 0, 0, 0])
        #expect(PGParameter.float8(1.5).encoded() == [0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        #expect(PGParameter.null(oid: 25).encoded() == nil)
        #expect(PGParameter.text("\u{0}").encoded() == [1, 1])
        // One dimension, no nulls, element type int8 (20), 2 elements from 1, then (length, bytes).
        #expect(
            PGParameter.int8Array([7, 8]).encoded()
                == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 2, 0, 0, 0, 1]
                + [0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 8])
        #expect(PGParameter.int8Array([]).encoded() == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20])
        // Texts escaped as one text is; reals and bytes as their own types (701, 17).
        #expect(
            PGParameter.textArray(["a", "\u{0}"]).encoded()
                == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1] + [0, 0, 0, 1, 0x61, 0, 0, 0, 2, 1, 1])
        #expect(
            PGParameter.float8Array([1.5]).encoded()
                == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 189, 0, 0, 0, 1, 0, 0, 0, 1]
                + [0, 0, 0, 8, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        #expect(
            PGParameter.byteaArray([Data([0, 255])]).encoded()
                == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 1] + [0, 0, 0, 2, 0, 255])
    }

    @Test("SQLSTATEs pack into distinct integers as PostgreSQL's MAKE_SQLSTATE does")
    func packing() {
        #expect(PostgresError.packed("23505") == 83_906_754)
        #expect(PostgresError.packed("40001") == 16_777_220)
        #expect(PostgresError.packed("40P01") == 16_908_292)
        #expect(PostgresError.packed("53100") == 4293)
        #expect(PostgresError.packed(nil) == 0)
    }

    @Test("server errors map to typed errors that keep the SQLSTATE and never the password")
    func mapping() {
        let options = PostgresOptions()
        func map(_ state: String?, _ phase: PostgresError.Phase = .ordinary, message: String = "m") -> StrataError {
            PostgresError.error(
                PGFailure(sqlState: state, message: message, connectionBroken: state == nil), sql: "SELECT 1",
                phase: phase, store: "postgresql://u@h/db?schema=s", options: options, redacting: "s3cret")
        }
        if case .busy(_, let native) = map("57014") {
            #expect(native?.sqlState == "57014")
            #expect(native?.code == PostgresError.packed("57014"))
        } else {
            Issue.record("57014 should be .busy")
        }
        #expect(map("55P03").withoutNative.isBusy)
        #expect(map(nil).withoutNative.isBusy) // lost, nothing written
        if case .commitOutcomeUnknown = map(nil, .committing) {
        } else {
            Issue.record("a connection lost in COMMIT is .commitOutcomeUnknown")
        }
        var timedOut = PGFailure(sqlState: nil, message: "m", connectionBroken: true)
        timedOut.timedOut = true
        let deadlineInCommit = PostgresError.error(
            timedOut, sql: "COMMIT", phase: .committing, store: "s", options: options)
        // Was .busy, which performUnitOfWork retried: the commit applied twice (issue 24).
        if case .commitOutcomeUnknown = deadlineInCommit {
        } else {
            Issue.record("a deadline passed in COMMIT is .commitOutcomeUnknown, got \(deadlineInCommit)")
        }
        #expect(PostgresEngine.isAmbiguous(timedOut))
        #expect(PostgresEngine.isAmbiguous(PGFailure(sqlState: "57P01", message: "m", connectionBroken: false)))
        #expect(!PostgresEngine.isAmbiguous(PGFailure(sqlState: "40001", message: "m", connectionBroken: false)))
        if case .notAStore = map("3D000") {} else { Issue.record("3D000 is .notAStore") }
        // A read-only server (a standby) is a state to wait out or route around, not a caller's bug.
        if case .busy(let detail, _) = map("25006") {
            #expect(detail.contains("standby"), "\(detail)")
        } else {
            Issue.record("25006 is .busy")
        }
        if case .busy(let detail, _) = map("53300") {
            #expect(detail.contains("CONNECTION LIMIT"), "\(detail)")
        } else {
            Issue.record("53300 is .busy")
        }
        if case .io(let detail, _) = map("42501") {
            #expect(detail.contains("UPDATE") && !detail.contains("grant it USAGE and CREATE"), "\(detail)")
        } else {
            Issue.record("42501 is .io")
        }
        if case .storeFull = map("53100") {} else { Issue.record("53100 is .storeFull") }
        if case .io(let detail, let native) = map("28P01", message: "password s3cret wrong") {
            #expect(!detail.contains("s3cret"))
            #expect(!(native?.message.contains("s3cret") ?? true))
        } else {
            Issue.record("28P01 is .io")
        }
        if case .engineFailure(let native) = map("XX000") {
            #expect(native.sqlState == "XX000")
        } else {
            Issue.record("XX000 is .engineFailure")
        }
    }

    @Test("the location is the URL without its password, with the schema, and parses as a URL")
    func location() {
        let url = PostgresLocation.url(
            redacting: "postgresql://app:s3cret@db.internal:5432/ledger?connect_timeout=3", schema: "books")
        #expect(!url.absoluteString.contains("s3cret"))
        #expect(url.absoluteString.hasPrefix("postgresql://app@db.internal:5432/ledger?"))
        #expect(url.absoluteString.contains("schema=books"))
        let socket = PostgresLocation.url(redacting: "postgresql://strata@/strata?host=/tmp/x&port=5432", schema: "b")
        #expect(socket.absoluteString == "postgresql://strata@/strata?host=/tmp/x&port=5432&schema=b")
    }
}

extension StrataError {
    fileprivate var isBusy: Bool { if case .busy = self { true } else { false } }
}

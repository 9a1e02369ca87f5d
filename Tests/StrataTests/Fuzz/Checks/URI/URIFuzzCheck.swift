import Foundation

@testable import Strata

/// The object-URI parser target: any bytes (decoded as UTF-8, invalid sequences repaired)
/// go to `ObjectID(parsing:)`.
///
/// Asserts: parsing never traps and fails only with `.invalidURI(_, .malformed)`; a parsed ID
/// prints a URI of at most 512 ASCII bytes that converts to a `URL`, re-parses to an equal
/// ID and prints the same URI again.
enum URIFuzzCheck {
    static func check(_ bytes: [UInt8]) throws(FuzzViolation) {
        let input = String(decoding: bytes, as: UTF8.self)
        let id: ObjectID
        do {
            id = try ObjectID(parsing: input)
        } catch {
            guard case .invalidURI(let echoed, .malformed) = error, echoed == input else {
                throw FuzzViolation("unexpected error for \(String(reflecting: input)): \(error)")
            }
            return
        }
        let printed = id.uriString
        guard printed.utf8.count <= 512, printed.utf8.allSatisfy({ $0 < 0x80 }) else {
            throw FuzzViolation(
                "\(String(reflecting: input)) prints as the non-ASCII or oversized \(String(reflecting: printed))")
        }
        guard id.uriRepresentation.absoluteString == printed else {
            throw FuzzViolation("\(String(reflecting: printed)) changes when converted to a URL")
        }
        let reparsed: ObjectID
        do {
            reparsed = try ObjectID(parsing: printed)
        } catch {
            throw FuzzViolation(
                "\(String(reflecting: input)) parses but its URI \(String(reflecting: printed)) does not: \(error)")
        }
        guard reparsed == id, reparsed.uriString == printed else {
            throw FuzzViolation(
                "\(String(reflecting: input)) → \(printed) re-parses to a different ID \(reparsed.uriString)")
        }
        guard id.isTemporary == (id.primaryKey == nil), (id.primaryKey ?? 1) > 0 else {
            throw FuzzViolation("\(String(reflecting: input)) parses to an inconsistent ID \(printed)")
        }
    }
}

import Foundation
import Strata
import Testing

/// `ObjectID` is `Codable` as its URI string; a string that is not one fails to decode with the
/// `invalidURI` error as the decoding error's underlying error.
@Suite("object ID coding")
struct ObjectIDCodingTests {
    struct Holder: Codable, Equatable {
        var id: ObjectID
    }

    @Test("an ID round-trips through JSON as its URI string")
    func roundTrip() throws {
        let id = ObjectID(storeIdentifier: UUID(), entityName: "Account", primaryKey: 42)
        let data = try JSONEncoder().encode(Holder(id: id))
        #expect(String(decoding: data, as: UTF8.self).contains("Account\\/p42"))
        #expect(try JSONDecoder().decode(Holder.self, from: data) == Holder(id: id))
    }

    @Test("a string that is not an object URI: dataCorrupted, its underlying error the invalidURI")
    func invalidURI() throws {
        let json = Data(#"{"id": "strata://not-a-store/Account/p42"}"#.utf8)
        do {
            _ = try JSONDecoder().decode(Holder.self, from: json)
            Issue.record("a malformed URI decoded")
        } catch DecodingError.dataCorrupted(let context) {
            let underlying = try #require(context.underlyingError as? StrataError, "no underlying error: \(context)")
            #expect(underlying == .invalidURI("strata://not-a-store/Account/p42", reason: .malformed))
            #expect(context.debugDescription == underlying.description)
            #expect(context.codingPath.map(\.stringValue) == ["id"])
        }
    }
}

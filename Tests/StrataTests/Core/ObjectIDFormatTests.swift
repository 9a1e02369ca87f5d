import Foundation
import Testing

@testable import Strata

/// The URI's store part is formatted without Foundation; it must stay exactly `uuidString`.
@Suite("object ID formatting")
struct ObjectIDFormatTests {
    @Test("the store UUID in a URI is exactly uuidString, for edge and random UUIDs")
    func uuidText() throws {
        var generator = SystemRandomNumberGenerator()
        var samples = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        samples.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        samples.append(
            UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10))
        )
        for _ in 0..<500 {
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
            samples.append(
                UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )))
        }
        for uuid in samples {
            #expect(ObjectID.uuidText(uuid) == uuid.uuidString)
            let id = ObjectID(storeIdentifier: uuid, entityName: "Account", primaryKey: 42)
            #expect(id.uriString == "strata://\(uuid.uuidString)/Account/p42")
            #expect(try ObjectID(parsing: id.uriString) == id)
        }
    }
}

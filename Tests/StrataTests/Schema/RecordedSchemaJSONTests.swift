import Foundation
import StrataStorage
import Testing

@Suite("Recorded schema JSON")
struct RecordedSchemaJSONTests {
    @Test func roundTripsAndIsStable() throws {
        let schema = SchemaDifferenceTests.base
        let text = try schema.jsonText()
        #expect(try RecordedSchema(jsonText: text, path: "p") == schema)
        #expect(try schema.jsonText() == text)
        // Sorted keys: "attributes" precedes "columns" in each entity; a format number leads the document.
        #expect(text.hasPrefix(#"{"entities":[{"attributes":[{"defaultValue":{"text":""},"isOptional":false,"#))
        #expect(text.contains(#""format":1,"joins":[{"left":"Book","name":"Book_tags_Tag_books","right":"Tag"}]"#))
    }

    @Test func everyStorageClassOfDefaultRoundTrips() throws {
        let values: [StoredValue] = [
            .null, .integer(-3), .real(1.5), .real(.infinity), .real(-.infinity), .text("a\"b"),
            .blob(Data([0, 1, 255])),
        ]
        for value in values {
            var schema = SchemaDifferenceTests.base
            schema.entities[0].attributes[0].defaultValue = RecordedValue(value)
            let decoded = try RecordedSchema(jsonText: try schema.jsonText(), path: "p")
            #expect(decoded.entities[0].attributes[0].defaultValue == RecordedValue(value), "\(value)")
        }
    }

    @Test func unreadableOrNewerJSONIsATypedError() {
        guard case .storeCorrupt = strataError({ _ = try RecordedSchema(jsonText: "{nope", path: "p") }) else {
            Issue.record("expected storeCorrupt")
            return
        }
        var newer = SchemaDifferenceTests.base
        newer.format = RecordedSchema.currentFormat + 1
        guard
            case .notAStore(path: "p", _, _) = strataError({
                _ = try RecordedSchema(jsonText: try newer.jsonText(), path: "p")
            })
        else {
            Issue.record("expected notAStore")
            return
        }
    }
}

import Foundation
import Strata
import StrataStorage
import Testing

/// The core fills the recorded schema from the model classes.
@Suite("Schema → recorded schema")
struct SchemaRecordingTests {
    @Test func theModelIsRecordedInModelTerms() throws {
        let recorded = try RecordedSchemaModels.library(version: 3).recordedSchema
        let expected = RecordedSchema(
            version: 3,
            entities: [
                RecordedEntity(
                    name: "Author", columns: ["name", "rating"],
                    attributes: [
                        RecordedAttribute(
                            name: "name", type: .string, isOptional: false, defaultValue: .init(.text(""))),
                        RecordedAttribute(
                            name: "rating", type: .double, isOptional: false, defaultValue: .init(.real(2.5))),
                    ],
                    relationships: [
                        RecordedRelationship(
                            name: "books", target: "Book", inverse: "author", kind: .toMany, deleteRule: "cascade")
                    ],
                    indexes: [RecordedIndex(name: "Author_name_unique", attributes: ["name"], isUnique: true)]),
                RecordedEntity(
                    name: "Book", columns: ["title", "year", "cover", "author"],
                    attributes: [
                        RecordedAttribute(
                            name: "title", type: .string, isOptional: false, defaultValue: .init(.text(""))),
                        RecordedAttribute(name: "year", type: .int64, isOptional: true, defaultValue: .init(.null)),
                        RecordedAttribute(
                            name: "cover", type: .data, isOptional: false, defaultValue: .init(.blob(Data([1, 2])))),
                    ],
                    relationships: [
                        RecordedRelationship(
                            name: "author", target: "Author", inverse: "books", kind: .toOne, deleteRule: "nullify"),
                        RecordedRelationship(
                            name: "shelves", target: "Shelf", inverse: "books", kind: .manyToMany,
                            deleteRule: "nullify", join: recorded.joins.first?.name),
                    ],
                    indexes: [
                        RecordedIndex(name: "Book_year_index", attributes: ["year"], isUnique: false),
                        RecordedIndex(name: "Book_title_year_unique", attributes: ["title", "year"], isUnique: true),
                    ]),
                RecordedEntity(
                    name: "Shelf", columns: ["label"],
                    attributes: [
                        RecordedAttribute(
                            name: "label", type: .string, isOptional: false, defaultValue: .init(.text("new")))
                    ],
                    relationships: [
                        RecordedRelationship(
                            name: "books", target: "Book", inverse: "shelves", kind: .manyToMany,
                            deleteRule: "nullify", join: recorded.joins.first?.name)
                    ],
                    indexes: []),
            ],
            joins: [RecordedJoin(name: recorded.joins.first?.name ?? "?", left: "Book", right: "Shelf")])
        #expect(recorded.joins.count == 1)
        #expect(recorded == expected)
        // The same model gives the same JSON every time.
        #expect(try recorded.jsonText() == RecordedSchemaModels.library(version: 3).recordedSchema.jsonText())
    }

    @Test func anAddedAttributeIsOneDifference() throws {
        let differences = RecordedSchema.differences(
            from: try RecordedSchemaModels.note().recordedSchema,
            to: try RecordedSchemaModels.noteWithISBN().recordedSchema)
        #expect(differences.map(\.description) == ["`Note.isbn` was added: `String`, not optional, default \"\""])
    }
}

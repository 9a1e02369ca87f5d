import Foundation
import StrataStorage
import Testing

/// `RecordedSchema.differences(from:to:)`, one test per kind of difference, on pure values.
@Suite("Schema differences")
struct SchemaDifferenceTests {
    /// Author 1—n Book, Book n—n Tag; Book has a unique title, an indexed year.
    static let base = RecordedSchema(
        version: 1,
        entities: [
            RecordedEntity(
                name: "Author", columns: ["name"],
                attributes: [
                    RecordedAttribute(name: "name", type: .string, isOptional: false, defaultValue: .init(.text("")))
                ],
                relationships: [
                    RecordedRelationship(
                        name: "books", target: "Book", inverse: "author", kind: .toMany, deleteRule: "cascade")
                ],
                indexes: []),
            RecordedEntity(
                name: "Book", columns: ["title", "year", "author"],
                attributes: [
                    RecordedAttribute(name: "title", type: .string, isOptional: false, defaultValue: .init(.text(""))),
                    RecordedAttribute(name: "year", type: .int64, isOptional: true, defaultValue: .init(.null)),
                ],
                relationships: [
                    RecordedRelationship(
                        name: "author", target: "Author", inverse: "books", kind: .toOne, deleteRule: "nullify"),
                    RecordedRelationship(
                        name: "tags", target: "Tag", inverse: "books", kind: .manyToMany, deleteRule: "nullify",
                        join: "Book_tags_Tag_books"),
                ],
                indexes: [
                    RecordedIndex(name: "Book_title_unique", attributes: ["title"], isUnique: true),
                    RecordedIndex(name: "Book_year_index", attributes: ["year"], isUnique: false),
                ]),
            RecordedEntity(
                name: "Tag", columns: [], attributes: [],
                relationships: [
                    RecordedRelationship(
                        name: "books", target: "Book", inverse: "tags", kind: .manyToMany, deleteRule: "nullify",
                        join: "Book_tags_Tag_books")
                ],
                indexes: []),
        ],
        joins: [RecordedJoin(name: "Book_tags_Tag_books", left: "Book", right: "Tag")])

    /// The base with `change` applied to entity `name`.
    private func changing(_ name: String, _ change: (inout RecordedEntity) -> Void) -> RecordedSchema {
        var schema = Self.base
        let index = schema.entities.firstIndex { $0.name == name }!
        change(&schema.entities[index])
        return schema
    }

    private func diff(_ model: RecordedSchema) -> [SchemaDifference] {
        RecordedSchema.differences(from: Self.base, to: model)
    }

    @Test func identicalSchemasHaveNoDifferences() {
        #expect(diff(Self.base).isEmpty)
        var otherVersion = Self.base
        otherVersion.version = 7
        #expect(diff(otherVersion).isEmpty, "versions are compared apart from the shape")
    }

    @Test func entityAddedAndRemoved() {
        let shelf = RecordedEntity(name: "Shelf", columns: [], attributes: [], relationships: [], indexes: [])
        var added = Self.base
        added.entities.append(shelf)
        #expect(diff(added) == [.entityAdded(shelf)])
        #expect(diff(added).map(\.description) == ["entity `Shelf` was added"])
        #expect(RecordedSchema.differences(from: added, to: Self.base) == [.entityRemoved(shelf)])
        #expect(
            RecordedSchema.differences(from: added, to: Self.base).first?.description == "entity `Shelf` was removed")
    }

    @Test func attributeAdded() {
        let isbn = RecordedAttribute(name: "isbn", type: .string, isOptional: false, defaultValue: nil)
        let model = changing("Book") {
            $0.attributes.append(isbn)
            $0.columns.append("isbn")
        }
        #expect(diff(model) == [.attributeAdded(entity: "Book", isbn)])
        #expect(diff(model).first?.description == "`Book.isbn` was added: `String`, not optional, no default")
        let pages = RecordedAttribute(name: "pages", type: .int, isOptional: false, defaultValue: .init(.integer(0)))
        let withDefault = changing("Book") { $0.attributes.append(pages) }
        #expect(diff(withDefault).first?.description == "`Book.pages` was added: `Int`, not optional, default 0")
    }

    @Test func attributeRemoved() {
        let model = changing("Book") {
            $0.attributes.removeAll { $0.name == "year" }
            $0.columns.removeAll { $0 == "year" }
            $0.indexes.removeAll { $0.name == "Book_year_index" }
        }
        let year = Self.base.entities[1].attributes[1]
        #expect(
            diff(model) == [
                .attributeRemoved(entity: "Book", year),
                .indexRemoved(entity: "Book", Self.base.entities[1].indexes[1]),
            ])
        #expect(diff(model).first?.description == "`Book.year` was removed (it was `Int64`, optional, default nil)")
    }

    @Test func attributeTypeChanged() {
        let model = changing("Book") { $0.attributes[1].type = .string }
        #expect(diff(model) == [.attributeTypeChanged(entity: "Book", attribute: "year", from: .int64, to: .string)])
        #expect(diff(model).first?.description == "`Book.year` changed type from `Int64` to `String`")
    }

    @Test func attributeOptionalityChanged() {
        let required = changing("Book") { $0.attributes[1].isOptional = false }
        #expect(diff(required) == [.attributeOptionalityChanged(entity: "Book", attribute: "year", isOptional: false)])
        #expect(diff(required).first?.description == "`Book.year` became required (it was optional)")
        let optional = changing("Book") { $0.attributes[0].isOptional = true }
        #expect(diff(optional).first?.description == "`Book.title` became optional (it was required)")
    }

    @Test func attributeDefaultChanged() {
        let model = changing("Author") { $0.attributes[0].defaultValue = .init(.text("Anonymous")) }
        #expect(
            diff(model) == [
                .attributeDefaultChanged(
                    entity: "Author", attribute: "name", from: .init(.text("")), to: .init(.text("Anonymous")))
            ])
        #expect(
            diff(model).first?.description
                == "`Author.name` changed its default from \"\" to \"Anonymous\"")
        // A default of another storage class is a change even when the numbers are equal.
        let real = changing("Book") { $0.attributes[1].defaultValue = .init(.real(0)) }
        let integer = changing("Book") { $0.attributes[1].defaultValue = .init(.integer(0)) }
        #expect(RecordedSchema.differences(from: real, to: integer).count == 1)
    }

    @Test func relationshipAddedAndRemoved() {
        let editor = RecordedRelationship(
            name: "editor", target: "Author", inverse: "edited", kind: .toOne, deleteRule: "nullify")
        let model = changing("Book") { $0.relationships.append(editor) }
        #expect(diff(model) == [.relationshipAdded(entity: "Book", editor)])
        #expect(
            diff(model).first?.description
                == "relationship `Book.editor` was added: to-one to `Author`, inverse `edited`, delete rule nullify")
        #expect(
            RecordedSchema.differences(from: model, to: Self.base) == [.relationshipRemoved(entity: "Book", editor)])
    }

    @Test func relationshipChanged() {
        let rule = changing("Author") { $0.relationships[0].deleteRule = "deny" }
        let before = Self.base.entities[0].relationships[0]
        var after = before
        after.deleteRule = "deny"
        #expect(diff(rule) == [.relationshipChanged(entity: "Author", from: before, to: after)])
        #expect(
            diff(rule).first?.description
                == """
                relationship `Author.books` changed from to-many to `Book`, inverse `author`, delete rule cascade to \
                to-many to `Book`, inverse `author`, delete rule deny
                """)
        let kind = changing("Author") { $0.relationships[0].kind = .manyToMany }
        #expect(diff(kind).count == 1)
        let inverse = changing("Author") { $0.relationships[0].inverse = "writer" }
        #expect(diff(inverse).count == 1)
        let target = changing("Author") { $0.relationships[0].target = "Tag" }
        #expect(diff(target).count == 1)
    }

    @Test func indexAddedAndRemoved() {
        let index = RecordedIndex(name: "Author_name_index", attributes: ["name"], isUnique: false)
        let model = changing("Author") { $0.indexes.append(index) }
        #expect(diff(model) == [.indexAdded(entity: "Author", index)])
        #expect(diff(model).first?.description == "an index on `Author` (name, named Author_name_index) was added")
        #expect(RecordedSchema.differences(from: model, to: Self.base) == [.indexRemoved(entity: "Author", index)])
    }

    @Test func uniqueConstraintAddedAndRemoved() {
        let unique = RecordedIndex(name: "Author_name_unique", attributes: ["name"], isUnique: true)
        let model = changing("Author") { $0.indexes.append(unique) }
        #expect(diff(model) == [.uniqueConstraintAdded(entity: "Author", unique)])
        #expect(
            diff(model).first?.description
                == "a unique constraint on `Author` (name, named Author_name_unique) was added")
        let removed = changing("Book") { $0.indexes.removeAll { $0.isUnique } }
        #expect(diff(removed) == [.uniqueConstraintRemoved(entity: "Book", Self.base.entities[1].indexes[0])])
    }

    @Test func joinAddedAndRemoved() {
        let join = RecordedJoin(name: "Author_fans_Tag_idols", left: "Author", right: "Tag")
        var added = Self.base
        added.joins.append(join)
        #expect(diff(added) == [.joinAdded(join)])
        #expect(diff(added).first?.description == "join table `Author_fans_Tag_idols` (`Author` ↔ `Tag`) was added")
        #expect(RecordedSchema.differences(from: added, to: Self.base) == [.joinRemoved(join)])
    }

    @Test func columnOrderChanged() {
        let model = changing("Book") {
            $0.columns = ["year", "title", "author"]
            $0.attributes.swapAt(0, 1)
        }
        #expect(
            diff(model) == [
                .columnOrderChanged(
                    entity: "Book", from: ["title", "year", "author"], to: ["year", "title", "author"])
            ])
    }

    @Test func mismatchMessageListsEveryDifferenceAndWhatToDo() {
        let model = changing("Book") {
            $0.attributes[1].type = .string
            $0.indexes.removeAll()
        }
        let error = StrataError.schemaMismatch(storeVersion: 1, modelVersion: 1, differences: diff(model))
        let message = error.description
        #expect(message.contains("which declares the same version"))
        for difference in diff(model) { #expect(message.contains("- " + difference.description)) }
        #expect(diff(model).count == 3)
        #expect(message.contains("open the store with the model that created it"))
    }
}

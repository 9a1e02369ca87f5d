import Foundation
import StrataStorage
import Testing

/// `SchemaMigrationPlan.infer(from:to:renames:)`: which differences become steps, in which order,
/// and which are refused with a typed error. Pure values (the base of `SchemaDifferenceTests`).
@Suite("Schema migration planner")
struct SchemaMigrationPlannerTests {
    private static let base = SchemaDifferenceTests.base

    /// The base at version 2 with `change` applied to entity `name`.
    private func next(_ name: String? = nil, _ change: (inout RecordedEntity) -> Void = { _ in }) -> RecordedSchema {
        var schema = Self.base
        schema.version = 2
        if let name {
            let index = schema.entities.firstIndex { $0.name == name }!
            change(&schema.entities[index])
        }
        return schema
    }

    private func refused(_ body: () throws(StrataError) -> SchemaMigrationPlan) -> [SchemaDifference]? {
        do {
            _ = try body()
            return nil
        } catch {
            guard case .migrationNotInferable(1, 2, let refused) = error else { return nil }
            return refused
        }
    }

    @Test func anOptionalAttributeAndADefaultedOneAreAddedWithTheirFill() throws {
        let isbn = RecordedAttribute(name: "isbn", type: .string, isOptional: true, defaultValue: nil)
        let pages = RecordedAttribute(name: "pages", type: .int64, isOptional: false, defaultValue: .init(.integer(0)))
        let model = next("Book") {
            $0.attributes += [isbn, pages]
            $0.columns += ["isbn", "pages"]
        }
        let plan = try SchemaMigrationPlan.infer(from: Self.base, to: model)
        #expect(
            plan.steps == [
                .addAttribute(entity: "Book", isbn, fill: .null),
                .addAttribute(entity: "Book", pages, fill: .integer(0)),
            ])
        #expect(plan.source == Self.base && plan.target == model)
    }

    @Test func aRequiredAttributeWithoutDefaultIsRefusedWithAMessagePointingToACustomStage() {
        let isbn = RecordedAttribute(name: "isbn", type: .string, isOptional: false, defaultValue: nil)
        let model = next("Book") {
            $0.attributes.append(isbn)
            $0.columns.append("isbn")
        }
        #expect(
            refused { () throws(StrataError) in try SchemaMigrationPlan.infer(from: Self.base, to: model) }
                == [.attributeAdded(entity: "Book", isbn)])
        let message = StrataError.migrationNotInferable(
            storeVersion: 1, modelVersion: 2,
            refused: [
                .attributeAdded(entity: "Book", isbn)
            ]
        ).description
        #expect(message.contains("`Book.isbn` was added: `String`, not optional, no default"))
        #expect(message.contains("custom stage"))
    }

    @Test func aTypeChangeIsRefusedAndNothingIsPlanned() {
        let model = next("Book") { $0.attributes[1].type = .string }
        #expect(
            refused { () throws(StrataError) in try SchemaMigrationPlan.infer(from: Self.base, to: model) }
                == [.attributeTypeChanged(entity: "Book", attribute: "year", from: .int64, to: .string)])
    }

    /// The refusal's message gives the advice that fits each refused kind, once, and no other.
    @Test func aRefusalSaysWhatToDoForEachKind() {
        let typeChange = StrataError.migrationNotInferable(
            storeVersion: 1, modelVersion: 2,
            refused: [
                .attributeTypeChanged(entity: "Book", attribute: "year", from: .int64, to: .string),
                .attributeTypeChanged(entity: "Book", attribute: "pages", from: .int64, to: .string),
            ]
        ).description
        #expect(typeChange.components(separatedBy: "A type change needs a custom stage").count == 2)
        #expect(!typeChange.contains("originalName") && !typeChange.contains("needs a default"))
        #expect(typeChange.hasSuffix("The store was not changed."))
        let required = StrataError.migrationNotInferable(
            storeVersion: 1, modelVersion: 2,
            refused: [.attributeOptionalityChanged(entity: "Book", attribute: "year", isOptional: false)]
        ).description
        #expect(required.contains("needs a default") && !required.contains("type change"))
        let stage = StrataError.migrationStageFailed(fromVersion: 1, toVersion: 2, reason: "no title.").description
        #expect(stage.contains("failed: no title. The store") && !stage.contains(".."))
    }

    @Test func optionalityChangesNeedADefaultOnlyToBecomeRequired() throws {
        let loosened = next("Author") { $0.attributes[0].isOptional = true }
        #expect(
            try SchemaMigrationPlan.infer(from: Self.base, to: loosened).steps == [
                .makeOptional(entity: "Author", attribute: "name")
            ])
        let tightened = next("Book") {
            $0.attributes[1].isOptional = false
            $0.attributes[1].defaultValue = .init(.integer(1970))
        }
        #expect(
            try SchemaMigrationPlan.infer(from: Self.base, to: tightened).steps == [
                .makeRequired(entity: "Book", attribute: "year", fill: .integer(1970)),
                .changeDefault(entity: "Book", attribute: "year", to: .init(.integer(1970))),
            ])
        let noDefault = next("Book") { $0.attributes[1].isOptional = false }
        #expect(
            refused { () throws(StrataError) in try SchemaMigrationPlan.infer(from: Self.base, to: noDefault) }
                == [.attributeOptionalityChanged(entity: "Book", attribute: "year", isOptional: false)])
    }

    @Test func renamesKeepTheDataInsteadOfDroppingAndAdding() throws {
        // Book.title becomes Book.name (its unique index follows), Author becomes Writer.
        var model = next("Book") {
            $0.attributes[0].name = "name"
            $0.columns[0] = "name"
            $0.indexes[0].attributes = ["name"]
            $0.relationships[0].target = "Writer"
        }
        model.entities[0].name = "Writer"
        let renames = SchemaRenames(entities: ["Writer": "Author"], attributes: ["Book": ["name": "title"]])
        let plan = try SchemaMigrationPlan.infer(from: Self.base, to: model, renames: renames)
        #expect(
            plan.steps == [
                .renameEntity(from: "Author", to: "Writer"),
                .renameAttribute(entity: "Book", from: "title", to: "name"),
            ])
        // Without the entity rename, Book.author points at an entity the store does not have: refused.
        let attributeOnly = SchemaRenames(attributes: ["Book": ["name": "title"]])
        let refusedRetarget = refused { () throws(StrataError) in
            try SchemaMigrationPlan.infer(from: Self.base, to: model, renames: attributeOnly)
        }
        #expect(refusedRetarget?.contains { if case .relationshipChanged = $0 { true } else { false } } == true)
        // Without the attribute rename, the title's values would be dropped and a new column added.
        var titleOnly = model
        titleOnly.entities[0].name = "Author"
        titleOnly.entities[1].relationships[0].target = "Author"
        let unrenamed = try SchemaMigrationPlan.infer(from: Self.base, to: titleOnly)
        #expect(unrenamed.steps.contains(.dropAttribute(entity: "Book", attribute: "title")))
        #expect(!unrenamed.steps.contains { if case .renameAttribute = $0 { true } else { false } })
    }

    /// The base with a second text attribute on Book, `subtitle`, at `version`.
    private func withSubtitle(version: Int) -> RecordedSchema {
        var schema = Self.base
        schema.version = version
        let subtitle = RecordedAttribute(
            name: "subtitle", type: .string, isOptional: false, defaultValue: .init(.text("")))
        schema.entities[1].attributes.append(subtitle)
        schema.entities[1].columns.append("subtitle")
        return schema
    }

    @Test func attributesThatSwapNamesGoThroughATemporaryName() throws {
        // The model's shape is the store's; only the renames say that the values trade places.
        let renames = SchemaRenames(attributes: ["Book": ["title": "subtitle", "subtitle": "title"]])
        let plan = try SchemaMigrationPlan.infer(
            from: withSubtitle(version: 1), to: withSubtitle(version: 2), renames: renames)
        let renamed = plan.steps.filter { if case .renameAttribute = $0 { true } else { false } }
        #expect(
            renamed == [
                .renameAttribute(entity: "Book", from: "title", to: "strata_renaming_title"),
                .renameAttribute(entity: "Book", from: "subtitle", to: "title"),
                .renameAttribute(entity: "Book", from: "strata_renaming_title", to: "subtitle"),
            ])
        // The unique constraint on `title` is the model's: it now holds over the other values.
        #expect(plan.steps.contains(.addUniqueConstraint(entity: "Book", Self.base.entities[1].indexes[0])))
        #expect(!plan.steps.contains { if case .dropAttribute = $0 { true } else { false } })
    }

    @Test func renamesThatPassANameAlongRunInTheOrderThatFreesIt() throws {
        // title was subtitle, and name was title: title must become name before subtitle becomes title.
        var model = withSubtitle(version: 2)
        model.entities[1].attributes[0].name = "name"
        model.entities[1].columns[0] = "name"
        model.entities[1].indexes[0].attributes = ["name"]
        model.entities[1].attributes[2].name = "title"
        model.entities[1].columns[3] = "title"
        let renames = SchemaRenames(attributes: ["Book": ["name": "title", "title": "subtitle"]])
        let plan = try SchemaMigrationPlan.infer(from: withSubtitle(version: 1), to: model, renames: renames)
        #expect(
            plan.steps.prefix(2) == [
                .renameAttribute(entity: "Book", from: "title", to: "name"),
                .renameAttribute(entity: "Book", from: "subtitle", to: "title"),
            ])
        #expect(!plan.steps.contains { if case .dropAttribute = $0 { true } else { false } })
        #expect(!plan.steps.contains { if case .addAttribute = $0 { true } else { false } })
    }

    @Test func entitiesThatPassANameAlongAreRenamedInOrderAndASwapIsMisuse() throws {
        // Writer was Author, and Author was Tag.
        var model = Self.base
        model.version = 2
        model.entities[0].name = "Writer"
        model.entities[2].name = "Author"
        model.entities[1].relationships[0].target = "Writer"
        model.entities[1].relationships[1].target = "Author"
        model.joins[0].right = "Author"
        let renames = SchemaRenames(entities: ["Writer": "Author", "Author": "Tag"])
        let plan = try SchemaMigrationPlan.infer(from: Self.base, to: model, renames: renames)
        #expect(
            plan.steps.prefix(2) == [
                .renameEntity(from: "Author", to: "Writer"), .renameEntity(from: "Tag", to: "Author"),
            ])
        #expect(!plan.steps.contains { if case .dropEntity = $0 { true } else { false } })
        let swap = SchemaRenames(entities: ["Author": "Tag", "Tag": "Author"])
        #expect {
            try SchemaMigrationPlan.infer(from: Self.base, to: next(), renames: swap)
        } throws: { error in
            guard case .misuse(let message, _) = error as? StrataError else { return false }
            return message.contains("Author, Tag") && message.contains("two schema versions")
        }
    }

    @Test func entitiesRelationshipsIndexesAndJoinsAreAddedAndDroppedInOrder() throws {
        var model = next("Book") {
            $0.indexes = [RecordedIndex(name: "Book_year_unique", attributes: ["year"], isUnique: true)]
            $0.relationships.removeLast()
            $0.relationships[0].deleteRule = "cascade"
        }
        model.entities.removeLast() // Tag and its join go
        model.entities[0].relationships = []
        model.entities[1].relationships.removeAll()
        model.entities[1].columns.removeLast()
        model.joins = []
        let shelf = RecordedEntity(name: "Shelf", columns: [], attributes: [], relationships: [], indexes: [])
        model.entities.append(shelf)
        let plan = try SchemaMigrationPlan.infer(from: Self.base, to: model)
        #expect(
            plan.steps == [
                .dropUniqueConstraint(entity: "Book", name: "Book_title_unique"),
                .dropIndex(entity: "Book", name: "Book_year_index"),
                .dropJoin("Book_tags_Tag_books"),
                .dropEntity("Tag"),
                .dropRelationship(entity: "Author", Self.base.entities[0].relationships[0]),
                .dropRelationship(entity: "Book", Self.base.entities[1].relationships[0]),
                .dropRelationship(entity: "Book", Self.base.entities[1].relationships[1]),
                .addEntity(shelf),
                .addUniqueConstraint(entity: "Book", model.entities[1].indexes[0]),
            ])
    }

    @Test func aDeleteRuleChangeIsInferredButARetargetedRelationshipIsNot() throws {
        let rule = next("Book") { $0.relationships[0].deleteRule = "deny" }
        #expect(
            try SchemaMigrationPlan.infer(from: Self.base, to: rule).steps == [
                .changeDeleteRule(entity: "Book", relationship: "author", to: "deny")
            ])
        let retargeted = next("Book") { $0.relationships[0].target = "Tag" }
        #expect(
            refused { () throws(StrataError) in try SchemaMigrationPlan.infer(from: Self.base, to: retargeted) }?.count
                == 1)
    }

    @Test func aStoreIsOnlyMigratedForwards() {
        var same = Self.base
        same.entities[0].attributes[0].isOptional = true
        #expect(
            throws: StrataError.schemaMismatch(
                storeVersion: 1, modelVersion: 1,
                differences: [
                    .attributeOptionalityChanged(entity: "Author", attribute: "name", isOptional: true)
                ])
        ) { try SchemaMigrationPlan.infer(from: Self.base, to: same) }
        var older = Self.base
        older.version = 0
        #expect(throws: StrataError.schemaMismatch(storeVersion: 1, modelVersion: 0, differences: [])) {
            try SchemaMigrationPlan.infer(from: Self.base, to: older)
        }
    }
}

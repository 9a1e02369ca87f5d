import Foundation
import StrataStorage

/// What `strata inspect` reports: the store's engine, record, recorded schema with row counts,
/// history and cursors. Encoded as is for `--json`.
struct InspectReport: Codable, Sendable, Equatable {
    var engine: String
    var location: String
    var storeIdentifier: String
    var schemaVersion: Int
    var entities: [Entity]
    var joins: [Join]
    var history: History
    var cursors: [Cursor]

    struct Entity: Codable, Sendable, Equatable {
        var name: String
        var rows: Int
        var attributes: [Attribute]
        var relationships: [Relationship]
        var indexes: [Index]
    }

    struct Attribute: Codable, Sendable, Equatable {
        var name: String
        var type: String
        var isOptional: Bool
    }

    struct Relationship: Codable, Sendable, Equatable {
        var name: String
        var target: String
        var inverse: String
        var kind: String
        var deleteRule: String
    }

    struct Index: Codable, Sendable, Equatable {
        var name: String
        var attributes: [String]
        var isUnique: Bool
    }

    struct Join: Codable, Sendable, Equatable {
        var name: String
        var left: String
        var right: String
    }

    /// The history's size: how many transactions it keeps, the oldest kept token (nil when it keeps
    /// none) and the last token handed out.
    struct History: Codable, Sendable, Equatable {
        var transactions: Int
        var oldestToken: Int64?
        var currentToken: Int64
    }

    /// A named history cursor and how many tokens it is behind the current one.
    struct Cursor: Codable, Sendable, Equatable {
        var name: String
        var token: Int64
        var lag: Int64
    }
}

extension InspectReport {
    /// Reads the report from an open store, every count from one snapshot.
    init(_ store: OpenedStore) throws {
        engine = store.inspection.engineName
        location = store.inspection.location
        storeIdentifier = store.record.identifier.uuidString
        schemaVersion = store.record.schemaVersion
        let counts = try store.read { reader in
            try store.schema.entities.map { try reader.count(entity: $0.number, filter: nil) }
        }
        entities = zip(store.recorded.entities, counts).map { entity, rows in
            Entity(
                name: entity.name, rows: rows,
                attributes: entity.attributes.map {
                    Attribute(name: $0.name, type: $0.type.rawValue, isOptional: $0.isOptional)
                },
                relationships: entity.relationships.map {
                    Relationship(
                        name: $0.name, target: $0.target, inverse: $0.inverse, kind: $0.kind.rawValue,
                        deleteRule: $0.deleteRule)
                },
                indexes: entity.indexes.map { Index(name: $0.name, attributes: $0.attributes, isUnique: $0.isUnique) })
        }
        joins = store.recorded.joins.map { Join(name: $0.name, left: $0.left, right: $0.right) }
        let current = try store.engine.currentHistoryToken()
        let summary = try store.inspection.readHistorySummary()
        history = History(transactions: summary.transactions, oldestToken: summary.oldestToken, currentToken: current)
        cursors = try store.engine.historyCursors().sorted { $0.key < $1.key }.map {
            Cursor(name: $0.key, token: $0.value, lag: max(current - $0.value, 0))
        }
    }

    /// The report as lines for a person.
    var text: String {
        var lines = [
            "store \(location) (\(engine))",
            "identifier \(storeIdentifier), schema version \(schemaVersion)",
        ]
        for entity in entities {
            lines.append("entity \(entity.name): \(entity.rows) row\(entity.rows == 1 ? "" : "s")")
            for attribute in entity.attributes {
                lines.append("  attribute \(attribute.name): \(attribute.type)\(attribute.isOptional ? "?" : "")")
            }
            for relation in entity.relationships {
                lines.append(
                    """
                      relationship \(relation.name): \(relation.kind) \(relation.target) (inverse \(relation.inverse), \
                    delete rule \(relation.deleteRule))
                    """)
            }
            for index in entity.indexes {
                lines.append(
                    "  \(index.isUnique ? "unique index" : "index") \(index.name) on "
                        + index.attributes.joined(separator: ", ")
                )
            }
        }
        for join in joins { lines.append("join \(join.name): \(join.left) ↔ \(join.right)") }
        let oldest = history.oldestToken.map { "oldest token \($0)" } ?? "empty"
        lines.append(
            "history: \(history.transactions) transaction\(history.transactions == 1 ? "" : "s"), \(oldest), "
                + "current token \(history.currentToken)"
        )
        if cursors.isEmpty { lines.append("history cursors: none") }
        for cursor in cursors {
            lines.append("history cursor \(cursor.name): token \(cursor.token), \(cursor.lag) behind")
        }
        return lines.joined(separator: "\n")
    }
}

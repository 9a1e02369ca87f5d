import Foundation
package import StrataStorage

extension EngineConfiguration {
    /// Copy access to an existing PostgreSQL store (the schema `schema` at `url`), for tools without
    /// a model: its key counters and its identifier rewritten, each on a connection of its own. No
    /// backup of its own: `strata backup` copies a PostgreSQL store into an embedded one.
    package static func postgresMaintenance(url: String, schema: String) -> StoreMaintenance {
        let options = PostgresOptions(poolSize: 2, creation: .requireExistingSchema)
        return StoreMaintenance(
            readKeyCounters: {
                try PostgresStoreMaintenance.keyCounters(url: url, schema: schema, options: options)
            },
            adoptIdentifier: {
                try PostgresStoreMaintenance.adoptIdentifier($0, url: url, schema: schema, options: options)
            },
            backup: nil)
    }
}

/// The statements behind ``StrataStorage/EngineConfiguration/postgresMaintenance(url:schema:)``.
enum PostgresStoreMaintenance {
    /// `strata_key_counters`.
    static func keyCounters(url: String, schema: String, options: PostgresOptions) throws -> [String: Int64] {
        try PostgresStoreContents.withMetadata(url: url, schema: schema, options: options) {
            (session, _) throws(StrataError) -> [String: Int64] in
            let names = PostgresStoreNames(schema: schema)
            let result = try session.run("SELECT entity, next_key FROM \(names.keyCounters)")
            var counters: [String: Int64] = [:]
            for row in 0..<result.rowCount {
                if let entity = result.text(row, 0), let next = result.int64(row, 1) {
                    counters[entity] = next
                }
            }
            return counters
        }
    }

    /// Rewrites `store_identifier`.
    static func adoptIdentifier(_ identifier: UUID, url: String, schema: String, options: PostgresOptions) throws {
        _ = try PostgresStoreContents.withMetadata(url: url, schema: schema, options: options) {
            (session, metadata) throws(StrataError) in
            try session.run(
                "UPDATE \(metadata) SET value = $1 WHERE key = 'store_identifier'",
                [.rawText(identifier.uuidString)])
        }
    }
}

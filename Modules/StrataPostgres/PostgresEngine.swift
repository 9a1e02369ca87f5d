import Foundation
import StrataStorage

/// Placeholder until the engine lands (issue 17): opening always fails with `.misuse`.
final class PostgresEngine: StorageEngine {
    let storeIdentifier = UUID()
    let schemaVersion = 0

    init(url: String, schema: String, storeSchema: StoreSchema, options: PostgresOptions) throws {
        throw StrataError.misuse("the PostgreSQL engine is not built yet")
    }

    func makeReader() throws -> any StoreReader { throw StrataError.misuse("not built") }
    func commit(_ changes: ChangeSet) throws { throw StrataError.misuse("not built") }
    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> { throw StrataError.misuse("not built") }
    func close() {}
}

/// Placeholder: the configuration's location (the URL without its password).
enum PostgresLocation {
    static func url(redacting url: String, schema: String) -> URL {
        URL(string: "postgresql://redacted")!
    }
}

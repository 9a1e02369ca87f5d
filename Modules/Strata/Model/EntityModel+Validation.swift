import StrataStorage

// The checks an entity's declaration must pass before its model exists. Each throws
// `.invalidSchema` with a message naming the entity or property and what to change. (Checked
// attributes' own checks are in `EntityModel+CheckedColumns.swift`.)
extension EntityModel {
    /// Refuses an entity name PostgreSQL cannot keep or that is not an ASCII identifier.
    static func checkEntityName(_ name: String) throws(StrataError) {
        guard name.utf8.count <= Schema.longestName else {
            throw .invalidSchema(
                """
                entity name \(String(reflecting: name)) has \(name.utf8.count) bytes, and PostgreSQL keeps \
                \(Schema.longestName); shorten it
                """)
        }
        guard EntityName.isValid(name) else {
            throw .invalidSchema(
                """
                entity name \(String(reflecting: name)) must be ASCII letters, digits and _, not starting with a \
                digit
                """)
        }
    }

    /// Refuses a default that differs between the prototype and its twin (`Date()`, `UUID()`).
    static func checkConstantDefault(
        _ defaultValue: StoredValue, twinDefault: StoredValue?, _ place: String
    ) throws(StrataError) {
        guard twinDefault == defaultValue else {
            throw .invalidSchema(
                """
                \(place) has a default that changes per instance (such as \
                Date() or UUID()); give it a constant default and set the value in awakeFromInsert()
                """
            )
        }
    }

    /// Refuses a NaN default, which no engine can store.
    static func checkStorableDefault(_ defaultValue: StoredValue, _ place: String) throws(StrataError) {
        if case .real(let v) = defaultValue, v.isNaN {
            throw .invalidSchema("\(place) defaults to NaN, which cannot be stored")
        }
    }

    /// Refuses two properties with the same declaration site, which accessors could not tell apart.
    static func checkDistinctSites(
        _ sites: [UInt32], of properties: [PropertyModel], entity: String
    ) throws(StrataError) {
        if let clash = firstSiteClash(sites, properties) {
            throw .invalidSchema(
                """
                \(entity): \(clash.0) and \(clash.1) have the same declaration site (the same reported \
                #fileID, #line and #column, as generated code with one #sourceLocation gives, or a \
                one-in-billions hash collision): declare them on different lines, or pass one of them an explicit \
                _line: or _column: argument
                """
            )
        }
    }

    /// Refuses a property name that is not an ASCII identifier, and the reserved `id` and `version`.
    static func checkPropertyNames(_ properties: [PropertyModel], entity: String) throws(StrataError) {
        for property in properties
        where !EntityName.isValid(property.name) || property.name == "id" || property.name == "version" {
            throw .invalidSchema(
                """
                \(entity).\(property.name): property names must be ASCII identifiers other than id and \
                version
                """
            )
        }
    }

    /// The names of the first two properties that share a site, if any do.
    private static func firstSiteClash(_ sites: [UInt32], _ properties: [PropertyModel]) -> (String, String)? {
        var seen: [UInt32: Int] = [:]
        for (index, site) in sites.enumerated() {
            if let earlier = seen.updateValue(index, forKey: site) {
                return (properties[earlier].name, properties[index].name)
            }
        }
        return nil
    }
}

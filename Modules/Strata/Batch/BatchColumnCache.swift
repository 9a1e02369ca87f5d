import Foundation
import StrataStorage

/// Key path → column lookups of one batch, remembered by key path, and the first misuse seen.
///
/// A value carried by the batch's one ``BatchRow`` from row to row, so a look-up is a plain
/// array scan, with no class and no runtime exclusivity check.
struct BatchColumnCache {
    let storeIdentifier: UUID
    private var known: [(keyPath: AnyKeyPath, column: Int)] = []
    /// Where the next lookup starts: a batch's closure sets the same key paths in the same order
    /// for every row, so the entry after the last hit is usually the next one wanted.
    private var next = 0
    private(set) var misuse: StrataError?

    init(storeIdentifier: UUID) {
        self.storeIdentifier = storeIdentifier
    }

    /// The column of `keyPath`, remembered for the next look-ups; nil, with the misuse
    /// recorded, when it is not a stored property of the kind asked for.
    mutating func column(_ keyPath: AnyKeyPath, model: EntityModel, relationship: Bool) -> Int? {
        let count = known.count
        let start = next < count ? next : 0
        for offset in 0..<count {
            var index = start + offset
            if index >= count { index -= count }
            if known[index].keyPath === keyPath {
                next = index + 1
                return known[index].column
            }
        }
        guard let column = Self.resolve(keyPath, model: model, relationship: relationship) else {
            if misuse == nil {
                misuse = .misuse(
                    """
                    a batch row of \(model.name) was given \(keyPath), which is not a stored \
                    \(relationship ? "to-one relationship" : "attribute") of \(model.name); nothing was written. \
                    Use the key path of an @\(relationship ? "Relationship" : "Attribute") property
                    """)
            }
            return nil
        }
        known.append((keyPath, column))
        next = known.count
        return column
    }

    /// The column of `keyPath` without remembering it (for reads), nil when it is not a stored
    /// property of the kind asked for.
    func lookUp(_ keyPath: AnyKeyPath, model: EntityModel, relationship: Bool) -> Int? {
        if let entry = known.first(where: { $0.keyPath === keyPath }) { return entry.column }
        return Self.resolve(keyPath, model: model, relationship: relationship)
    }

    private static func resolve(_ keyPath: AnyKeyPath, model: EntityModel, relationship: Bool) -> Int? {
        guard let property = model.propertyIndex(forKeyPath: keyPath), let column = model.properties[property].column,
            model.properties[property].isRelationship == relationship
        else { return nil }
        return column
    }

    mutating func recordBadTarget(_ id: ObjectID, keyPath: AnyKeyPath, model: EntityModel) {
        guard misuse == nil else { return }
        let property = model.propertyIndex(forKeyPath: keyPath).map { "\(model.name).\(model.properties[$0].name)" }
        let link = property ?? "\(keyPath)"
        misuse =
            id.isTemporary
            ? .misuse(
                """
                a batch row of \(model.name) links \(link) to \(id.uriString), an unsaved object without its \
                permanent ID yet; nothing was staged. Call obtainPermanentIDs(for:) on the target first (or save \
                it), then pass its objectID
                """)
            : .misuse(
                """
                a batch row of \(model.name) links \(link) to \(id.uriString), which is not an object of the \
                relationship's target entity in this store; nothing was staged. Pass the objectID of a saved target, \
                or of an inserted one after obtainPermanentIDs(for:)
                """)
    }
}

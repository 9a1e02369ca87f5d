import Foundation
import StrataStorage

// The URI lookups that an earlier version removed without notice, back as deprecated forwarders
// to the methods that replaced them, so that code written against them builds again, with a
// warning that names the replacement. They go away in a later minor version (CHANGELOG.md).

extension ObjectContext {
    /// Parses a URI string and checks it names an entity of this store.
    ///
    /// Deprecated: use ``managedObjectID(forURIRepresentation:)``, which takes a `URL`.
    ///
    /// ```swift
    /// let id = try context.managedObjectID(forURIRepresentation: URL(string: uri)!)
    /// ```
    /// - Throws: ``StrataStorage/StrataError/invalidURI(_:reason:)`` (`.malformed`, `.otherStore`,
    ///   `.unknownEntity`).
    @available(
        *, deprecated,
        message: "use managedObjectID(forURIRepresentation:) with the URI as a URL; this forwarder will be removed"
    )
    public func objectID(forURIString uri: String) throws -> ObjectID {
        // The text itself, so that an error names the string as given (a URL would percent-encode it).
        try managedObjectID(forURIText: uri)
    }

    /// The object a URI string names, typed. Call inside `perform`.
    ///
    /// Deprecated: use ``managedObjectID(forURIRepresentation:)`` and ``existingObject(with:as:)``.
    ///
    /// ```swift
    /// let id = try context.managedObjectID(forURIRepresentation: url)
    /// let account = try context.existingObject(with: id, as: Account.self)
    /// ```
    /// - Returns: an object valid only inside this `perform`.
    /// - Throws: ``StrataStorage/StrataError/invalidURI(_:reason:)``,
    ///   ``StrataStorage/StrataError/objectNotFound(_:)``, ``StrataStorage/StrataError/wrongEntity(_:expected:)``.
    @available(
        *, deprecated,
        message:
            "use existingObject(with: managedObjectID(forURIRepresentation: url), as:); this forwarder will be removed"
    )
    public func object<Object: ManagedObject>(forURIString uri: String, as type: Object.Type) throws -> Object {
        try existingObject(with: managedObjectID(forURIText: uri), as: type)
    }
}

extension ObjectID {
    /// Parses a URI string produced by ``StrataStorage/ObjectID/uriString`` without checking it
    /// against a store.
    ///
    /// Deprecated: use ``Strata/ObjectContext/managedObjectID(forURIRepresentation:)``, which also checks
    /// the store and entity, or decode an `ObjectID` with `Codable`.
    ///
    /// ```swift
    /// let id = try JSONDecoder().decode(ObjectID.self, from: Data("\"\(uri)\"".utf8))
    /// ```
    /// - Throws: ``StrataStorage/StrataError/invalidURI(_:reason:)`` with `.malformed`.
    @available(
        *, deprecated,
        message: "use ObjectContext.managedObjectID(forURIRepresentation:) or decode ObjectID with Codable"
    )
    public init(uriString: String) throws {
        try self.init(parsing: uriString)
    }
}

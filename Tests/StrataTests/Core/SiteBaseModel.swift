import Foundation
import Strata

/// A model base class that is not an entity itself, declared in its own file. Its attribute is
/// declared at the same (explicit) line and column as ``SiteStampedNote/text`` in
/// `PropertySiteTests.swift`, so the two sites differ only by file.
class SiteStamped: ManagedObject {
    @Attribute(_line: 1, _column: 1) var stamp: Int64 = 7
}

/// An entity whose attribute's setter is private to this file: key paths formed elsewhere are
/// still writable at run time, which the schema builder's key-path mapping relies on.
final class SitePrivateSet: ManagedObject {
    @Attribute private(set) var locked: Int64 = 0
    @Attribute var note = ""

    func lock(_ value: Int64) { locked = value }
}

import Foundation
import Strata

/// A model base class that is not an entity itself, declared in its own file. Its attribute is
/// declared at the same (explicit) line and column as ``SiteStampedNote/text`` in
/// `PropertySiteTests.swift`, so the two sites differ only by file.
class SiteStamped: ManagedObject {
    @Attribute(line: 1, column: 1) var stamp: Int64 = 7
}

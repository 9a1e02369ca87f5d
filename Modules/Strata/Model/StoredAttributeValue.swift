public import StrataStorage

/// An attribute value in the form the store keeps it. Opaque: only Strata reads or makes one.
///
/// It appears in ``AttributeValue``'s requirements, which you never implement or call yourself:
/// the built-in types conform already, and your own types get every requirement from
/// ``RawValueAttribute`` or ``CodableAttribute``. It keeps the engine interface's value type out
/// of the user API.
public struct StoredAttributeValue: Sendable {
    /// The engine-level value.
    @usableFromInline package var value: StoredValue

    /// Wraps an engine-level value.
    @inlinable @inline(__always)
    package init(_ value: StoredValue) { self.value = value }
}

/// The kind of column an attribute type is stored in. Opaque: only Strata reads or makes one.
///
/// Like ``StoredAttributeValue``, it appears only in ``AttributeValue``'s requirements, which
/// the built-in types, ``RawValueAttribute`` and ``CodableAttribute`` implement for you.
public struct AttributeColumnType: Sendable, Hashable {
    /// The engine-level column type.
    @usableFromInline package var type: ColumnType

    /// Wraps an engine-level column type.
    @inlinable
    package init(_ type: ColumnType) { self.type = type }
}

// Walled file (strict memory safety): the one place the contract lends out a row's storage.

extension StoredRow {
    /// Lets an engine decode a row over this one's values, reusing their storage when nothing
    /// else holds it, so that a scan can hand out every row in one array: a consumer that copies
    /// the values out (the core does) leaves the storage to the next row, and one that keeps the
    /// row keeps its own copy, as with any array.
    ///
    /// `body` gets `count` initialized values (the previous row's, or `.null`) to overwrite.
    ///
    /// ```swift
    /// var row = StoredRow(key: 0, version: 0, values: [])
    /// while let next = cursor.next() {
    ///     row.key = next.key
    ///     row.version = next.version
    ///     row.overwriteValues(count: columnCount) { values in
    ///         for column in values.indices { values[column] = next.value(column) }
    ///     }
    ///     try body(row)
    /// }
    /// ```
    /// - Throws: what `body` throws; the values are then partly overwritten.
    @inlinable
    public mutating func overwriteValues<Failure: Error>(
        count: Int, _ body: (UnsafeMutableBufferPointer<StoredValue>) throws(Failure) -> Void
    ) throws(Failure) {
        if values.count != count { values = ContiguousArray(repeating: .null, count: count) }
        try unsafe values.withUnsafeMutableBufferPointer { (buffer) throws(Failure) in try unsafe body(buffer) }
    }
}

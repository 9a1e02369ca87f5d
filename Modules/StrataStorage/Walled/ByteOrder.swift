import Foundation

/// The byte order of texts and byte strings, and the hashing of a text's bytes, for
/// ``StoredValue``'s order and hash: `memcmp` over the bytes in place, with no copy.
///
/// Walled file (strict memory safety): the buffers come from `withUTF8` and `withUnsafeBytes`
/// and are used only inside them; `memcmp` reads the common prefix of two in-bounds buffers.
///
/// ```swift
/// ByteOrder.compare("a", "b")  // .orderedAscending
/// ```
enum ByteOrder {
    /// Binary (UTF-8 byte) order of two strings, which is Unicode scalar order.
    static func compare(_ a: String, _ b: String) -> ComparisonResult {
        var a = a
        var b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in unsafe compareBuffers(pa, pb) } }
    }

    /// Whether two strings have the same UTF-8 bytes: the lengths first, then one `memcmp` (a
    /// walk of the two UTF-8 views cost about 500 instructions for two 25-byte texts).
    static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // In place, with no copy of either string (nil only for a string not stored as UTF-8).
        let inPlace = unsafe a.utf8.withContiguousStorageIfAvailable { pa in
            unsafe b.utf8.withContiguousStorageIfAvailable { pb in unsafe compareBuffers(pa, pb) == .orderedSame }
        }
        if let inPlace, let equal = inPlace { return equal }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// Bytewise order of two byte strings, shorter first on a common prefix.
    static func compare(_ a: Data, _ b: Data) -> ComparisonResult {
        unsafe a.withUnsafeBytes { ra in
            unsafe b.withUnsafeBytes { rb in
                unsafe compareBuffers(ra.bindMemory(to: UInt8.self), rb.bindMemory(to: UInt8.self))
            }
        }
    }

    /// Feeds the UTF-8 bytes of `text` to `hasher`, as one run.
    static func hashUTF8(of text: String, into hasher: inout Hasher) {
        var copy = text
        copy.withUTF8 { unsafe hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    private static func compareBuffers(
        _ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>
    ) -> ComparisonResult {
        let common = min(a.count, b.count)
        if common > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let result = unsafe memcmp(pa, pb, common)
            if result != 0 { return result < 0 ? .orderedAscending : .orderedDescending }
        }
        if a.count == b.count { return .orderedSame }
        return a.count < b.count ? .orderedAscending : .orderedDescending
    }
}

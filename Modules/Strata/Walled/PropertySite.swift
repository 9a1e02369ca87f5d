/// The identity of a property declaration: its source position (`#fileID`, `#line`,
/// `#column` of the property, which Swift passes to the wrapper's initialiser), hashed into 32
/// bits. It is a property wrapper's whole per-instance storage.
///
/// The hash is of the file name's *text*, so it is the same in every instance of a class, in
/// every image (a module that inlines a model's initialiser carries its own copy of the string,
/// at another address). The wrapper initialisers are inlinable, so in optimised builds the
/// compiler computes the site at compile time and an object's initialiser stores a constant.
/// An accessor finds its column by comparing this number with the model's, without forming a
/// key path. The schema builder rejects a model two of whose properties have the same site (a
/// hash collision, or generated code that reports one `#sourceLocation` for several properties)
/// with a typed error.
@usableFromInline
enum PropertySite {
    /// FNV-1a over the file name, then the position mixed in with a multiply.
    @inlinable @inline(__always)
    static func make(fileID: StaticString, line: UInt, column: UInt) -> UInt32 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        // The one unsafe site of this file: a `StaticString`'s bytes are reachable only as a
        // buffer pointer, read here in bounds; the compiler folds the whole hash to a constant.
        fileID.withUTF8Buffer { bytes in
            // (An index loop: `swift format` would glue `for unsafe byte` into one word.)
            let count = bytes.count
            for index in 0..<count { hash = (hash ^ UInt64(unsafe bytes[index])) &* 0x0000_0100_0000_01B3 }
        }
        hash ^= UInt64(truncatingIfNeeded: line) &<< 20 ^ UInt64(truncatingIfNeeded: column)
        hash = (hash ^ (hash &>> 29)) &* 0xD6E8_FEB8_6659_FD93
        let site = UInt32(truncatingIfNeeded: hash &>> 32)
        return site == 0 ? 1 : site
    }
}

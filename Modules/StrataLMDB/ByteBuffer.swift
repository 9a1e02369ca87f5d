/// A growable byte buffer written through a raw pointer: the committer encodes every row and
/// index key of a change set into two of these, so encoding costs no array bookkeeping.
///
/// Writers call ``reserve(_:)`` for an upper bound of what they append, then the unchecked
/// `append` methods. Lifetime rule: ``bytes`` is valid until the next write or `reset`.
final class ByteBuffer {
    private var base: UnsafeMutableRawPointer
    /// Bytes allocated.
    private(set) var capacity: Int
    /// How many bytes are written.
    private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { base.deallocate() }

    /// Forgets the contents, keeping the memory.
    @inline(__always)
    func reset() { count = 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends one byte; room must be reserved.
    @inline(__always)
    func append(_ byte: UInt8) { store(byte) }

    /// Appends 8 bytes, little-endian; room must be reserved.
    @inline(__always)
    func appendLittleEndian(_ value: UInt64) { store(value.littleEndian) }

    /// Appends 8 bytes, big-endian; room must be reserved.
    @inline(__always)
    func appendBigEndian(_ value: UInt64) { store(value.bigEndian) }

    /// Appends 4 bytes, little-endian; room must be reserved.
    @inline(__always)
    func appendLittleEndian(_ value: UInt32) { store(value.littleEndian) }

    /// Stores an integer's bytes as they are in memory; room must be reserved.
    @inline(__always)
    private func store<T: FixedWidthInteger>(_ value: T) {
        assert(count + MemoryLayout<T>.size <= capacity, "ByteBuffer: append without reserve")
        base.storeBytes(of: value, toByteOffset: count, as: T.self)
        count &+= MemoryLayout<T>.size
    }

    /// Appends raw bytes; room must be reserved.
    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        assert(count + bytes.count <= capacity, "ByteBuffer: append without reserve")
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count &+= bytes.count
    }

    /// Appends a varint (7 bits a byte, low group first); room for 10 bytes must be reserved.
    @inline(__always)
    func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    /// The bytes written so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// The bytes written so far, as an array.
    var array: [UInt8] { Array(bytes) }
}

import Foundation
import StrataStorage

/// Each entity's row count and checksum, and each join's link count and checksum, of one
/// snapshot: what `strata copy` compares between its source and its target.
///
/// A row's checksum is FNV-1a (64 bits) over its key and its values (each with its storage class,
/// a text or blob with its length, `-0.0` as `0.0`), mixed, and an entity's is the wrapping sum of
/// its rows': it does not depend on the order rows are read in, nor on the row versions (a copy
/// starts every row at version 1).
struct StoreDigest: Codable, Sendable, Equatable {
    /// One entity's or join's count and checksum.
    struct Part: Codable, Sendable, Equatable {
        var name: String
        var count: Int
        var checksum: String
    }

    var entities: [Part]
    var joins: [Part]

    /// The differences from `other`, one line each: none when they match.
    func differences(from other: StoreDigest) -> [String] {
        var lines: [String] = []
        for (mine, theirs) in zip(entities + joins, other.entities + other.joins) where mine != theirs {
            lines.append(
                "\(mine.name): \(mine.count) (checksum \(mine.checksum)) against \(theirs.count) (\(theirs.checksum))")
        }
        if entities.count != other.entities.count || joins.count != other.joins.count {
            lines.append("the stores have different entities or joins")
        }
        return lines
    }
}

/// Adds rows or links into one ``StoreDigest/Part``.
struct DigestAccumulator {
    let name: String
    private(set) var count = 0
    private var sum: UInt64 = 0

    init(name: String) {
        self.name = name
    }

    mutating func add(_ row: StoredRow) {
        var hash = FNV1a()
        hash.add(row.key)
        for value in row.values { hash.add(value) }
        include(hash.state)
    }

    mutating func add(left: Int64, right: Int64) {
        var hash = FNV1a()
        hash.add(left)
        hash.add(right)
        include(hash.state)
    }

    private mutating func include(_ hash: UInt64) {
        // A finalizer (splitmix64's), so that rows differing in a few bits do not cancel in the sum.
        var mixed = hash
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        mixed ^= mixed >> 31
        sum &+= mixed
        count += 1
    }

    var part: StoreDigest.Part {
        let hex = String(sum, radix: 16)
        return StoreDigest.Part(name: name, count: count, checksum: String(repeating: "0", count: 16 - hex.count) + hex)
    }
}

/// FNV-1a, 64 bits, over the bytes given.
private struct FNV1a {
    private(set) var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(byte: UInt8) {
        state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ value: Int64) {
        add(word: UInt64(bitPattern: value))
    }

    mutating func add(word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { add(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    mutating func add(_ value: StoredValue) {
        switch value {
        case .null: add(byte: 0)
        case .integer(let integer):
            add(byte: 1)
            add(integer)
        case .real(let real):
            add(byte: 2)
            add(word: real == 0 ? 0 : real.bitPattern)
        case .text(let text):
            add(byte: 3)
            add(Int64(text.utf8.count))
            for byte in text.utf8 { add(byte: byte) }
        case .blob(let data):
            add(byte: 4)
            add(Int64(data.count))
            for byte in data { add(byte: byte) }
        }
    }
}

extension StoreDigest {
    /// The digest of the snapshot `reader` reads: every entity's rows streamed, every join's links
    /// read for pages of its left entity's keys.
    init(reading schema: StoreSchema, _ reader: any StoreReader) throws {
        entities = try schema.entities.map { entity in
            var digest = DigestAccumulator(name: entity.name)
            try reader.forEachRow(for: FetchPlan(entity: entity.number, inKeyOrder: false)) { digest.add($0) }
            return digest.part
        }
        joins = try schema.joins.map { join in
            var digest = DigestAccumulator(name: join.name)
            try StoreCopier.forEachPage(of: join.leftEntity, reader, rows: 2000) { rows in
                try reader.forEachLink(join: join.number, from: .left, keys: rows.map(\.key)) {
                    digest.add(left: $0, right: $1)
                }
            }
            return digest.part
        }
    }
}

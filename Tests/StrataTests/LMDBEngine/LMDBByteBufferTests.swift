import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

@Suite("LMDB byte buffer encoders")
struct LMDBByteBufferTests {
    static let samples: [StoredValue] = [
        .null, .integer(0), .integer(-1), .integer(.min), .integer(.max), .real(0), .real(-0.0), .real(-2.5),
        .real(.infinity), .real(-.infinity), .text(""), .text("a\u{0}b"), .text(String(repeating: "é", count: 300)),
        .blob(Data()), .blob(Data([0, 0, 255, 0])), .blob(Data(repeating: 7, count: 1_000)),
    ]

    @Test("index keys encode byte for byte as the array encoder does")
    func indexKeysMatch() {
        let buffer = ByteBuffer(capacity: 1)
        for value in Self.samples {
            var expected: [UInt8] = [9]
            IndexKeyCodec.append(value, to: &expected)
            buffer.reset()
            buffer.reserve(1)
            buffer.append(9)
            IndexKeyCodec.append(value, to: buffer)
            #expect(buffer.array == expected, "\(value)")
        }
    }

    @Test("a row encoded into a reused buffer decodes back, and a value its column refuses stops encoding")
    func rowsRoundTrip() throws {
        let buffer = ByteBuffer(capacity: 1)
        for value in Self.samples {
            let values: ContiguousArray<StoredValue> = [value, .integer(4), value]
            let storageClass: StorageClass =
                switch value {
                case .null, .integer: .integer
                case .real: .real
                case .text: .text
                case .blob: .blob
                }
            let classes: [StorageClass] = [storageClass, .integer, storageClass]
            let layout = EntityLayout(name: "Row", classes: ContiguousArray(classes))
            #expect(RowCodec.encode(version: 2, values: values, checking: ContiguousArray(classes), into: buffer))
            let row = try RowCodec.decode(buffer.bytes, key: 1, layout: layout)
            #expect(row == StoredRow(key: 1, version: 2, values: values))
            #expect(buffer.array == RowCodec.encode(version: 2, values: values))
        }
        #expect(!RowCodec.encode(version: 1, values: [.integer(1)], checking: [.text], into: buffer))
        #expect(!RowCodec.encode(version: 1, values: [.real(.nan)], checking: [.real], into: buffer))
    }

    @Test("a long text or blob followed by fixed-size values stays inside the buffer, at every length")
    func longValueThenIntegers() throws {
        let layout = EntityLayout(
            name: "Row", classes: [.text, .integer, .integer, .real, .integer, .blob, .integer, .integer])
        for length in 180...300 {
            let buffer = ByteBuffer()
            let values: ContiguousArray<StoredValue> = [
                .text(String(repeating: "m", count: length)), .integer(1), .integer(-2), .real(3.5), .integer(4),
                .blob(Data(repeating: 7, count: length)), .integer(5), .integer(Int64.max),
            ]
            #expect(RowCodec.encode(version: 3, values: values, checking: nil, into: buffer))
            // Every append checks its room (in release too) and grows the buffer when it must.
            #expect(buffer.count <= buffer.capacity)
            #expect(
                try RowCodec.decode(buffer.bytes, key: 9, layout: layout)
                    == StoredRow(key: 9, version: 3, values: values))
        }
    }
}

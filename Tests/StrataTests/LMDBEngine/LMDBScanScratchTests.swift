import StrataStorage
import Testing

@testable import StrataLMDB

@Suite("LMDB scan scratch placement")
struct LMDBScanScratchTests {
    /// Where in its 4 KiB page element 0 of `scratch` lies.
    static func pageOffset<Element>(_ scratch: ScanScratch<Element>) -> Int {
        scratch.elementAddress(0) & (StackAnchor.pageSize - 1)
    }

    @Test("elements start the asked distance after the anchor in their page, 64-byte aligned, for every anchor")
    func placement() {
        for anchorOffset in stride(from: 0, to: 4096, by: 37) {
            let anchor = StackAnchor(pageOffset: anchorOffset)
            for distance in [0, 1, 63, 64, 1024, 1500, 4000] {
                let scratch = ScanScratch(count: 3, repeating: 7 as Int64, anchor: anchor, distance: distance)
                let expected = ((anchorOffset + distance + 63) / 64 * 64) % 4096
                #expect(Self.pageOffset(scratch) == expected, "anchor \(anchorOffset), distance \(distance)")
                #expect(Self.pageOffset(scratch) % 64 == 0)
                #expect((0..<3).map { scratch[$0] } == [7, 7, 7])
            }
        }
    }

    @Test("growing keeps every element and the page offset")
    func growth() {
        let anchor = StackAnchor(pageOffset: 0xAF7)
        let scratch = ScanScratch(count: 0, repeating: LMDBFoldLane(), anchor: anchor, distance: 1184)
        let offset = Self.pageOffset(scratch)
        for group in 0..<500 {
            scratch.append(repeating: LMDBFoldLane(), count: 2)
            scratch[2 * group].count = Int64(group)
            scratch[2 * group + 1].real = Double(group) / 2
            #expect(Self.pageOffset(scratch) == offset, "after \(group + 1) appends")
        }
        #expect(scratch.count == 1_000)
        #expect(
            (0..<500).allSatisfy { scratch[2 * $0].count == Int64($0) && scratch[2 * $0 + 1].real == Double($0) / 2 })
        #expect((0..<500).allSatisfy { scratch[2 * $0].real == 0 && scratch[2 * $0 + 1].count == 0 })
    }

    @Test("an empty scratch has its place, and elements past the first page follow the first")
    func emptyAndLong() {
        let anchor = StackAnchor(pageOffset: 100)
        let scratch = ScanScratch(count: 0, repeating: 0 as UInt8, anchor: anchor, distance: 0)
        #expect(scratch.count == 0)
        #expect(scratch.endDistance == 28) // 100 rounded up to 128: 28 bytes past the anchor
        scratch.append(repeating: 9, count: 10_000)
        let start = scratch.elementAddress(0)
        #expect(Self.pageOffset(scratch) == 128)
        #expect(scratch.elementAddress(9_999) == start + 9_999)
        #expect(scratch.elementAddress(10_000) == start + 10_000)
        #expect(scratch.endDistance == 28 + 10_000)
        #expect((0..<10_000).allSatisfy { scratch[$0] == 9 })
    }

    @Test("a fold's lanes start where its notes end, for every anchor and column count")
    func foldLayout() {
        let layout = EntityLayout(name: "Line", classes: [.integer, .text, .real, .integer])
        for anchorOffset in 0..<4096 {
            let anchor = StackAnchor(pageOffset: anchorOffset)
            let fields = RowFields(
                layout: layout, checksText: [false, true, false, false], groupBy: [1], anchor: anchor)
            let notesStart = (anchorOffset + RowFields.notesDistance + 63) / 64 * 64 % 4096
            #expect(fields.notesPageOffset == notesStart, "anchor \(anchorOffset)")
            let notesAfterAnchor = (notesStart - anchorOffset + 4096) % 4096
            #expect(fields.notesEnd == notesAfterAnchor + 4 * MemoryLayout<RowField>.stride, "anchor \(anchorOffset)")
            for noteCount in [1, 3, 4, 7] {
                let notes = ScanScratch(
                    count: noteCount, repeating: RowField(tag: 0, bits: 0, length: 0), anchor: anchor, distance: 1024)
                let lanes = ScanScratch(
                    count: 0, repeating: LMDBFoldLane(), anchor: anchor, distance: notes.endDistance)
                let notesFrom = (Self.pageOffset(notes) - anchorOffset + 4096) % 4096
                let lanesFrom = (Self.pageOffset(lanes) - anchorOffset + 4096) % 4096
                #expect(
                    lanesFrom >= notesFrom + noteCount * MemoryLayout<RowField>.stride,
                    "anchor \(anchorOffset), \(noteCount) notes")
            }
        }
    }
}

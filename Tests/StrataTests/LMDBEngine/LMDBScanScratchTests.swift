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

    @Test("a fold's notes and lanes follow the anchor, the lanes after the notes")
    func foldLayout() {
        let here = StackAnchor.here()
        #expect((0..<4096).contains(here.pageOffset))
        let layout = EntityLayout(name: "Line", classes: [.integer, .text, .real, .integer])
        let fields = RowFields(layout: layout, checksText: [false, true, false, false], groupBy: [1], anchor: here)
        let notesStart = (here.pageOffset + RowFields.notesDistance + 63) / 64 * 64 % 4096
        #expect(fields.notesPageOffset == notesStart)
        #expect(fields.notesEnd == RowFields.notesDistance + 4 * MemoryLayout<RowField>.stride)
    }
}

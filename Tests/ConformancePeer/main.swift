// The conformance kit's second process for its cross-process checks (`ConformancePeer`):
//
//   strata-conformance-peer --engine sqlite|lmdb <the kit's arguments>
//
// opens the store the kit names with the chosen engine and does what the kit asks
// (`StrataConformance.peerMain`). `ConformanceTests` starts it from next to the test binary.

import Foundation
import Strata
import StrataConformance
import StrataLMDB
import StrataSQLite

let arguments = CommandLine.arguments
guard let index = arguments.firstIndex(of: "--engine"), index + 1 < arguments.count,
    ["sqlite", "lmdb"].contains(arguments[index + 1])
else {
    FileHandle.standardError.write(Data("usage: strata-conformance-peer --engine sqlite|lmdb <kit arguments>\n".utf8))
    exit(2)
}
let isLMDB = arguments[index + 1] == "lmdb"
exit(
    await StrataConformance.peerMain(arguments: arguments) { location in
        isLMDB ? .lmdb(at: location) : .sqlite(at: location)
    })

// The conformance kit's second process for its cross-process checks (`ConformancePeer`):
//
//   strata-conformance-peer --engine sqlite|lmdb|postgres <the kit's arguments>
//
// opens the store the kit names with the chosen engine and does what the kit asks
// (`StrataConformance.peerMain`). `ConformanceTests` starts it from next to the test binary.

import Foundation
import PostgresTestStores
import Strata
import StrataConformance
import StrataLMDB
import StrataSQLite
import StrataTestSupport

let arguments = CommandLine.arguments
guard let index = arguments.firstIndex(of: "--engine"), index + 1 < arguments.count,
    ["sqlite", "lmdb", "postgres"].contains(arguments[index + 1])
else {
    FileHandle.standardError.write(
        Data("usage: strata-conformance-peer --engine sqlite|lmdb|postgres <kit arguments>\n".utf8))
    exit(2)
}
let engineName = arguments[index + 1]
exit(
    await StrataConformance.peerMain(arguments: arguments) { location in
        switch engineName {
        case "lmdb": .lmdb(at: location)
        case "postgres": TestPostgres.configuration(at: location)
        default: .sqlite(at: location)
        }
    })

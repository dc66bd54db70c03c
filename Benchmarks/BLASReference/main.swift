// The machine's limits for a given amount of E-step work, measured now (OpenBLAS single-threaded, one block or
// person range per worker, as the calibrator runs):
//
//   blas-reference MULTIPLY_ADDS [ITEMS] [NODES] [WORKERS]
//       dgemm on the dense E-step's shape (block × items × nodes) until MULTIPLY_ADDS have been done;
//   blas-reference rows CELLS ITEMS NODES CELLS_PER_PERSON PASSES [WORKERS]
//       the sparse E-step's row traffic without its arithmetic (`RowTrafficReference`): PASSES sweeps over
//       CELLS answers to items drawn at random from ITEMS.
//
// Prints seconds (best of 3; WORKERS default 2).
import Dispatch
import Foundation
import Psychometrics

let args = CommandLine.arguments
func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            """
            usage: blas-reference MULTIPLY_ADDS [ITEMS=100] [NODES=61] [WORKERS=2]
                   blas-reference rows CELLS ITEMS NODES CELLS_PER_PERSON PASSES [WORKERS=2]

            """.utf8))
    exit(64)
}
BLASConfiguration.setThreadCount(1)
if args.count >= 2 && args[1] == "rows" {
    let numbers = args.dropFirst(2).map { Int($0) }
    guard numbers.count >= 5, numbers.allSatisfy({ ($0 ?? 0) > 0 }) else { usage() }
    let n = numbers.map { $0! }
    let seconds = RowTrafficReference.seconds(
        cells: n[0], items: n[1], nodes: n[2], cellsPerPerson: n[3], passes: n[4],
        workers: n.count > 5 ? n[5] : 2)
    print(String(format: "%.4f", seconds))
} else {
    guard args.count >= 2, let work = Double(args[1]), work > 0 else { usage() }
    let items = args.count > 2 ? Int(args[2]) ?? 100 : 100
    let nodes = args.count > 3 ? Int(args[3]) ?? 61 : 61
    let workers = args.count > 4 ? max(1, Int(args[4]) ?? 2) : 2
    print(String(format: "%.4f", try BLASReference.seconds(multiplyAdds: work, items: items, nodes: nodes, workers: workers)))
}

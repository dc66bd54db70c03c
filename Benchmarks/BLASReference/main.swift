// The machine's matrix-multiply limit for a given amount of arithmetic, measured now: times OpenBLAS dgemm on
// the E-step's shape (block × items × nodes) until `multiply-adds` have been done, with the same worker layout
// as the calibrator (OpenBLAS single-threaded, one block per worker at a time).
//
//   blas-reference MULTIPLY_ADDS [ITEMS] [NODES] [WORKERS]     prints seconds (best of 3; WORKERS default 2)
import Dispatch
import Foundation
import Psychometrics

let args = CommandLine.arguments
guard args.count >= 2, let work = Double(args[1]), work > 0 else {
    FileHandle.standardError.write(Data("usage: blas-reference MULTIPLY_ADDS [ITEMS=100] [NODES=61] [WORKERS=2]\n".utf8))
    exit(64)
}
BLASConfiguration.setThreadCount(1)
let items = args.count > 2 ? Int(args[2]) ?? 100 : 100
let nodes = args.count > 3 ? Int(args[3]) ?? 61 : 61
let workers = args.count > 4 ? max(1, Int(args[4]) ?? 2) : 2
print(String(format: "%.4f", try BLASReference.seconds(multiplyAdds: work, items: items, nodes: nodes, workers: workers)))

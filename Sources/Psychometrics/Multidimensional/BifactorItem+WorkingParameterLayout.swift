import Foundation

extension [BifactorItem] {
    /// Where the working parameters of the items `free` (in that order) lie in an EM parameter vector: each item's
    /// `workingParameterCount` in turn from 0 (its block), and where the parameters after them begin. The layout
    /// of the bifactor and the correlated-factors engines, whose own parameters (testlet ratios, correlations)
    /// follow the items'.
    func workingParameterBlocks(free: [Int]) -> (blocks: [Range<Int>], end: Int) {
        var blocks: [Range<Int>] = [], offset = 0
        for j in free {
            blocks.append(offset..<(offset + self[j].workingParameterCount))
            offset += self[j].workingParameterCount
        }
        return (blocks, offset)
    }

    /// The items `free` set from their blocks of `x` (laid out as `workingParameterBlocks`), each through
    /// `fit.bounded` (an item whose values it refuses keeps its own); returns where the parameters after them begin.
    mutating func setWorkingParameters(_ x: [Double], free: [Int], fit: BifactorItemFit) -> Int {
        var offset = 0
        for j in free {
            let m = self[j].workingParameterCount
            if let item = fit.bounded(self[j], [Double](x[offset..<(offset + m)])) { self[j] = item }
            offset += m
        }
        return offset
    }
}

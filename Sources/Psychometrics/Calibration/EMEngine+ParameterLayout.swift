import Foundation

extension EMEngine {
    /// Number of free working parameters: Rasch/1PL: 1 + J (shared slope first); 2PL: 2J; 3PL: 3J.
    /// With fixed items, over the F free items only, plus μ and σ last: Rasch/1PL F + 2 (the slope is
    /// fixed); 2PL 2F + 2; 3PL 3F + 2.
    var freeParameterCount: Int {
        if estimatesLatent {
            switch model {
            case .rasch, .onePL: return freeItemCount + 2
            case .twoPL: return 2 * freeItemCount + 2
            case .threePL: return 3 * freeItemCount + 2
            }
        }
        switch model {
        case .rasch, .onePL: return 1 + itemCount
        case .twoPL: return 2 * itemCount
        case .threePL: return 3 * itemCount
        }
    }

    /// Global indices of μ and σ (with fixed items only).
    var latentMeanIndex: Int { freeParameterCount - 2 }
    var latentSDIndex: Int { freeParameterCount - 1 }

    /// Working parameters per item as seen by the derivative code (slope, intercept[, γ]).
    var perItem: Int { model == .threePL ? 3 : 2 }

    /// Global index of item j's working parameter t (0 = slope, 1 = intercept, 2 = γ); −1 when the parameter
    /// is not estimated (a fixed item's, or the slope of Rasch/1PL items calibrated onto fixed items).
    @inline(__always) func globalIndex(item j: Int, parameter t: Int) -> Int {
        if estimatesLatent {
            let f = freeIndex[j]
            if f < 0 { return -1 }
            switch model {
            case .rasch, .onePL: return t == 1 ? f : -1
            case .twoPL, .threePL: return perItem * f + t
            }
        }
        switch model {
        case .rasch, .onePL: return t == 0 ? 0 : 1 + j
        case .twoPL, .threePL: return perItem * j + t
        }
    }
}

import Foundation

/// Orlando & Thissen's (2000) S-X² item fit statistic over the items each person answered, so that it is
/// defined for incomplete (missing-by-design) data as well as for complete data.
///
/// Persons who answered item j are grouped by (number of items answered n, summed score s on them), groups
/// ordered by s/n, then n; persons at s = 0 or s = n carry no information and are left out. With E_ij the
/// expected score of person i on item j given their score and form (`SummedScoreExpectation`),
/// ```
/// S-X²_j = Σ_g (O_g − E_g)² / V_g,   O_g = Σ_{i∈g} u_ij,  E_g = Σ_{i∈g} E_ij,  V_g = Σ_{i∈g} E_ij (1 − E_ij)
/// df = groups − free parameters of the item (Rasch/1PL 1, 2PL 2, 3PL 3)
/// ```
/// Sparse groups are pooled by one of two rules (`SX2Pooling`): `.forward` (the default) pools adjacent groups
/// from the low end until both E_g and (persons − E_g) reach `minimumExpected` (1), a short last group joining
/// the one before; `.mirt` follows mirt's `itemfit` (`collapseCells`, mirt 1.47, dichotomous items): a group of
/// exactly one person joins the next (the last joins the one before), then, while some group has an expected
/// count (E_g or persons − E_g) below the minimum, the first such group joins a neighbour — the first group the
/// second, the last the one before, any other the neighbour with fewer persons (ties: the one before). The two
/// rules can pool the same table differently, and so give other p-values (measured with mirt 1.47 on a 32-item
/// test: 13 items differed from the forward rule); `.mirt` follows mirt's source (R/utils.R) step by step but has
/// not been compared with mirt's own output here. When every person answered the same items and no group
/// is pooled, every E_ij in a group is the same E_js and this is Orlando & Thissen's N_s (O_s − E_s)² /
/// (E_s (1 − E_s)) exactly. Given the scores, the u_ij are independent Bernoulli(E_ij), so V_g is the exact
/// variance of O_g whatever the forms (pooled groups of different E are not inflated as with N ē (1 − ē)).
///
/// Undefined for an item (nil) when no person has 0 < s < n on it; the p-value is undefined when df ≤ 0.
package struct OrlandoThissenSX2: Sendable {
    package struct Group: Sendable {
        var persons = 0.0, observed = 0.0, expected = 0.0, variance = 0.0
        mutating func add(_ other: Group) {
            persons += other.persons; observed += other.observed; expected += other.expected; variance += other.variance
        }
    }

    package struct Result: Sendable, Hashable {
        package var statistic: Double
        package var degreesOfFreedom: Int
        /// nil when df ≤ 0.
        package var p: Double?
        package var persons: Int
    }

    /// Per item: groups keyed by n · keyStride + s.
    private var groups: [[Int: Group]]
    private let keyStride: Int

    package init(itemCount: Int) {
        groups = [[Int: Group]](repeating: [:], count: itemCount)
        keyStride = itemCount + 1
    }

    /// One response u to item j by a person with summed score s on the n items they answered, and its
    /// expectation e = E_j(s) on their form. Responses at s = 0 or s = n are ignored.
    package mutating func add(item j: Int, answered n: Int, score s: Int, response u: UInt8, expected e: Double) {
        guard s > 0, s < n, e.isFinite else { return }
        groups[j][n * keyStride + s, default: Group()].add(Group(persons: 1, observed: Double(u), expected: e, variance: e * (1 - e)))
    }

    package mutating func merge(_ other: OrlandoThissenSX2) {
        for j in groups.indices {
            groups[j].merge(other.groups[j]) { a, b in
                var a = a; a.add(b); return a
            }
        }
    }

    /// S-X², df and p of item j; nil when no person informs it.
    package func result(item j: Int, freeParameters: Int, minimumExpected: Double, pooling: SX2Pooling = .forward) -> Result? {
        let ordered = groups[j].sorted { a, b in
            let (na, sa) = (a.key / keyStride, a.key % keyStride), (nb, sb) = (b.key / keyStride, b.key % keyStride)
            return sa * nb != sb * na ? sa * nb < sb * na : na < nb
        }
        guard !ordered.isEmpty else { return nil }
        let pooled = Self.pool(ordered.map(\.value), minimumExpected: minimumExpected, rule: pooling)
        var statistic = 0.0, persons = 0.0
        for g in pooled {
            persons += g.persons
            if g.variance > 0 { statistic += (g.observed - g.expected) * (g.observed - g.expected) / g.variance }
        }
        let df = pooled.count - freeParameters
        return Result(
            statistic: statistic, degreesOfFreedom: df,
            p: df > 0 ? ChiSquare.upperTail(statistic, degreesOfFreedom: Double(df)) : nil, persons: Int(persons))
    }

    /// The score groups of one item (ordered by score) pooled by `rule`.
    package static func pool(_ groups: [Group], minimumExpected: Double, rule: SX2Pooling) -> [Group] {
        switch rule {
        case .forward:
            var pooled: [Group] = []
            var pending = Group()
            for g in groups {
                pending.add(g)
                if pending.expected >= minimumExpected && pending.persons - pending.expected >= minimumExpected {
                    pooled.append(pending)
                    pending = Group()
                }
            }
            if pending.persons > 0 {
                if pooled.isEmpty { pooled.append(pending) } else { pooled[pooled.count - 1].add(pending) }
            }
            return pooled
        case .mirt:
            // mirt's collapseCells for a dichotomous item: rows are score groups, cells (persons − E, E).
            var rows = groups.filter { $0.persons > 0 }
            // A group of exactly one person joins the next; the last such joins the one before.
            var k = 0
            while k < rows.count - 1 {
                if rows[k].persons == 1 { rows[k + 1].add(rows[k]); rows.remove(at: k) } else { k += 1 }
            }
            if rows.count > 1 && rows[rows.count - 1].persons == 1 {
                rows[rows.count - 2].add(rows[rows.count - 1])
                rows.removeLast()
            }
            // Merge across while an expected cell is below the minimum (cells of exactly 0 excepted, as mirt).
            func small(_ g: Group) -> Bool {
                let cells = [g.persons - g.expected, g.expected]
                return cells.contains { $0 < minimumExpected && $0 != 0 }
            }
            while rows.count > 1, let w = rows.firstIndex(where: small) {
                if w == 0 {
                    rows[1].add(rows[0])
                } else if w == rows.count - 1 {
                    rows[w - 1].add(rows[w])
                } else {
                    rows[rows[w - 1].persons <= rows[w + 1].persons ? w - 1 : w + 1].add(rows[w])
                }
                rows.remove(at: w)
            }
            return rows
        }
    }
}

/// How S-X² pools sparse score groups (`OrlandoThissenSX2`): `forward` from the low end until both expected
/// counts reach the minimum (iqscore's default), or `mirt` as mirt's `itemfit` collapses them.
package enum SX2Pooling: String, Sendable, Hashable, Codable, CaseIterable {
    case forward
    case mirt
}

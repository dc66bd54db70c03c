/// How a bank file's header maps onto iqscore's parameters: the native layout, or one of the foreign layouts that
/// other IRT tools write, read on purpose with a stated conversion.
///
/// iqscore's model is P(θ) = c + (1 − c)/(1 + exp(−a(θ − b))) on the logistic metric (D = 1), as mirt, catR
/// (with its default `D = 1`) and girth use. The layouts it reads:
///
/// | layout | header | conversion |
/// |---|---|---|
/// | native | `item_id,a,b[,c]` | none |
/// | mirt `coef(IRTpars = TRUE)` | `a,b,g,u` | c = g; u must be 1 |
/// | mirt slope–intercept `coef()` | `a1,d[,g,u]` | b = −d/a1, c = g; u must be 1 |
/// | catR item bank | `a,b,c,d` | d is the upper asymptote and must be 1 |
/// | girth / pandas | `discrimination,difficulty[,guessing]` | none |
///
/// The item ids come from `item_id`, or, when there is none, from a first column whose header is empty: the
/// row names that R's `write.csv` and pandas' `to_csv` write. A header with two names for one parameter (`c`
/// and `g`), a second slope (`a2`: a multidimensional model) or an upper asymptote below 1 (4PL) is refused with
/// what to rename or refit; see `ItemBank.load(csv:)`.
public struct BankLayout: Sendable, Hashable, Codable {
    /// The layout's name as messages show it, e.g. "mirt slope–intercept (a1, d, g, u)".
    public var name: String
    /// What was converted, e.g. "b = −d/a1, c = g; u must be 1"; empty for the native layout.
    public var conversion: String
    /// Whether this is iqscore's own layout (`item_id,a,b[,c]`), read without any conversion.
    public var isNative: Bool

    /// Header positions (0-based) of each parameter.
    package var idColumn: Int
    package var idColumnName: String
    package var slopeColumn: Int
    package var slopeName: String
    /// The difficulty b, or the intercept d (slope–intercept: b = −d/a) when `locationIsIntercept`; nil for a
    /// bank of items in more than two categories only (`categoryColumns`).
    package var locationColumn: Int?
    package var locationName: String
    package var locationIsIntercept: Bool
    package var guessingColumn: Int?
    package var guessingName: String
    /// An upper asymptote that must be 1 (or empty) in every row.
    package var upperColumn: Int?
    package var upperName: String
    /// Every header position this layout consumes (not carried as metadata).
    package var consumedColumns: Set<Int>
    /// Header positions of the columns of items in more than two categories (`CategoryBankItem`), by name: the
    /// IRT form `b1…` (graded, gpcm, pcm thresholds or steps) and `a_0…`, `c_0…` (nominal), mirt's
    /// slope–intercept `d1…` (graded) and `ak0…`, `d0…` (gpcm, nominal), the `se_` column of each IRT-form name,
    /// and `categories` (the responses each category stands for).
    package var categoryColumns: [String: Int] = [:]

    /// Whether `name` is a column of items in more than two categories (see `categoryColumns`).
    package static func isCategoryColumn(_ name: String) -> Bool {
        if name == "categories" { return true }
        let bare = name.hasPrefix("se_") ? String(name.dropFirst(3)) : name
        func numbered(_ prefix: String, from first: Int) -> Bool {
            guard bare.hasPrefix(prefix), let k = Int(bare.dropFirst(prefix.count)), k >= first,
                String(k) == bare.dropFirst(prefix.count)
            else { return false }
            return true
        }
        if numbered("b", from: 1) || numbered("a_", from: 0) || numbered("c_", from: 0) { return true }
        return bare == name && (numbered("d", from: 0) || numbered("ak", from: 0))
    }

    /// The layout that `header` (trimmed names) spells, or a message saying why none fits and what to rename.
    package static func detect(_ header: [String]) -> Result<BankLayout, BankLayoutError> {
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        let lowered = header.map { $0.lowercased() }
        func foreign(_ name: String) -> Int? { lowered.firstIndex(of: name) }
        func refuse(_ message: String) -> Result<BankLayout, BankLayoutError> { .failure(BankLayoutError(message: message)) }
        let found = "(found: \(header.joined(separator: ",")))"

        // Item ids: item_id, or R / pandas row names (an empty first header).
        let idColumn: Int, idName: String
        if let c = column("item_id") {
            idColumn = c; idName = "item_id"
        } else if header.first == "" && header.count > 1 {
            idColumn = 0; idName = "row names"
        } else {
            return refuse(
                "the bank header lacks item_id \(found); name the item id column item_id (a file written by R's write.csv or pandas' to_csv, whose first header is empty, is read as such)"
            )
        }
        // A bifactor bank (`calibrate --model bifactor`: a_<factor> columns; mirt's bfactor: a1, a2, …).
        let factorSlopes = header.filter { $0.hasPrefix("a_") && $0.count > 2 && Int($0.dropFirst(2)) == nil }
        if factorSlopes.count >= 2 {
            return refuse(
                "a bifactor bank (slope columns \(factorSlopes.prefix(4).joined(separator: ", "))\(factorSlopes.count > 4 ? ", …" : "")): this command reads unidimensional banks (score reads a bifactor bank as a battery); give it a unidimensional bank (a 2PL or 3PL calibration)"
            )
        }
        if let c = foreign("a2") {
            return refuse(
                "column \(c + 1) is 'a2', a second slope (a multidimensional model, such as mirt's bfactor): this command reads unidimensional banks (score reads a bifactor bank as a battery); give it a unidimensional bank (refit with one factor)"
            )
        }

        // Slope.
        let slopeCandidates = [("a", column("a")), ("a1", foreign("a1")), ("discrimination", foreign("discrimination"))].filter { $0.1 != nil }
        guard let slope = slopeCandidates.first else {
            return refuse("the bank header has no slope column \(found); name it a (or a1 as mirt writes, discrimination as girth)")
        }
        if slopeCandidates.count > 1 {
            return refuse("the bank header names the slope twice (\(slopeCandidates.map(\.0).joined(separator: " and "))) \(found); keep one")
        }

        // Location: difficulty b, or the slope–intercept d when there is no b (with b, catR's d is the upper asymptote).
        // A bank of items in more than two categories only (mirt's graded or gpcm table) may have neither.
        var categoryColumns: [String: Int] = [:]
        for (c, name) in header.enumerated() where isCategoryColumn(name) { categoryColumns[name] = c }
        let bColumn = column("b") ?? foreign("difficulty")
        let dColumn = column("d")
        let location: (Int?, String, Bool)
        if let b = bColumn {
            location = (b, header[b], false)
        } else if let d = dColumn {
            guard slope.0 == "a1" else {
                return refuse(
                    "the bank header has \(slope.0) and d but no b \(found): if d is mirt's intercept (aθ + d), name the slope a1; if it is a difficulty, name it b"
                )
            }
            location = (d, "d", true)
        } else if categoryColumns.keys.contains(where: { !$0.hasPrefix("se_") && $0 != "categories" }) {
            location = (nil, "b", slope.0 == "a1")
        } else {
            return refuse(
                "the bank header has no difficulty column \(found); name it b (or give mirt's intercept as a1,d; thresholds of items in more than two categories as b1, b2, …)"
            )
        }
        if slope.0 == "a1" && !location.2 {
            return refuse(
                "the bank header has mirt's slope–intercept slope a1 with a difficulty \(header[location.0!]) \(found): name the slope a (a, b: mirt's IRTpars = TRUE) or give the intercept d instead of b"
            )
        }

        // Lower and upper asymptotes.
        let guessCandidates = [("c", column("c")), ("g", foreign("g")), ("guessing", foreign("guessing"))].filter { $0.1 != nil }
        if guessCandidates.count > 1 {
            return refuse(
                "the bank header names the lower asymptote twice (\(guessCandidates.map(\.0).joined(separator: " and "))) \(found); keep one")
        }
        var upperCandidates = [("u", foreign("u"))]
        if !location.2 { upperCandidates.append(("d", dColumn)) }
        upperCandidates = upperCandidates.filter { $0.1 != nil }
        if upperCandidates.count > 1 {
            return refuse(
                "the bank header names the upper asymptote twice (\(upperCandidates.map(\.0).joined(separator: " and "))) \(found); keep one")
        }
        let guess = guessCandidates.first, upper = upperCandidates.first

        // Name and conversion, as a note states them.
        let name: String
        var conversions: [String] = []
        switch (slope.0, location.2) {
        case ("a1", true):
            name =
                "mirt slope–intercept (a1, " + (location.0 == nil ? "d0/d1 …" : "d") + (guess != nil ? ", g" : "") + (upper != nil ? ", u" : "") + ")"
            if location.0 != nil { conversions.append("b = −d/a1") }
        case ("discrimination", _):
            name = "girth (discrimination, difficulty" + (guess != nil ? ", guessing" : "") + ")"
        default:
            let thresholds = categoryColumns.keys.filter { $0.hasPrefix("b") }.count
            if location.0 == nil && thresholds > 0 && idName == "row names" {
                name = "mirt IRTpars (a, b1 … b\(thresholds))"
            } else if guess?.0 == "g" || upper?.0 == "u" {
                name = "mirt IRTpars (a, b" + (guess != nil ? ", g" : "") + (upper != nil ? ", u" : "") + ")"
            } else if upper?.0 == "d" {
                name = "catR (a, b, c, d)"
            } else {
                name = "iqscore (item_id, a, b" + (guess != nil ? ", c" : "") + ")"
            }
        }
        if let guess, guess.0 != "c" { conversions.append("c = \(header[guess.1!])") }
        if let upper { conversions.append("\(upper.0) (upper asymptote) must be 1") }
        if idName == "row names" { conversions.append("item ids from the unnamed first column") }
        let interceptForm = categoryColumns.keys.contains { $0.hasPrefix("d") || $0.hasPrefix("ak") }
        if interceptForm {
            conversions.append(
                "items in more than two categories from mirt's slope–intercept form: graded b_k = −d_k/a1, gpcm b_k = −(d_k − d_{k−1})/a1 (ak_k = k), nominal a_k = a1·ak_k, c_k = d_k"
            )
        }

        var consumed: Set<Int> = [idColumn, slope.1!]
        if let l = location.0 { consumed.insert(l) }
        consumed.formUnion(categoryColumns.values)
        if let g = guess?.1 { consumed.insert(g) }
        if let u = upper?.1 { consumed.insert(u) }
        let isNative =
            idName == "item_id" && slope.0 == "a" && location.0.map({ header[$0] }) == "b" && (guess == nil || guess?.0 == "c") && upper == nil
            && !interceptForm
        return .success(
            BankLayout(
                name: name, conversion: conversions.joined(separator: "; "), isNative: isNative,
                idColumn: idColumn, idColumnName: idName, slopeColumn: slope.1!, slopeName: header[slope.1!],
                locationColumn: location.0, locationName: location.1, locationIsIntercept: location.2,
                guessingColumn: guess?.1, guessingName: guess.map { header[$0.1!] } ?? "c",
                upperColumn: upper?.1, upperName: upper.map { header[$0.1!] } ?? "u", consumedColumns: consumed,
                categoryColumns: categoryColumns))
    }
}

/// Why a bank header fits no layout `BankLayout` reads.
package struct BankLayoutError: Error {
    package var message: String
}

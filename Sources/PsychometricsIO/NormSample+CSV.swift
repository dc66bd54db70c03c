import Foundation
import Norming
import Psychometrics

/// The columns of a norm sample CSV.
package struct NormSampleColumns: Sendable {
    package var age: String
    package var theta: String
    package var standardError: String?
    package var weight: String?
    /// Categorical columns to read (the margins' variables).
    package var variables: [String]
    /// Response data instead of θ: each row's θ and SE are scored with this scorer (its method, EAP by
    /// default) from the row's responses in the columns named after the bank's items; `theta` and
    /// `standardError` are then not read.
    package var scorer: SessionScorer?

    package init(
        age: String, theta: String, standardError: String? = nil, weight: String? = nil, variables: [String] = [],
        scorer: SessionScorer? = nil
    ) {
        self.age = age
        self.theta = theta
        self.standardError = standardError
        self.weight = weight
        self.variables = variables
        self.scorer = scorer
    }
}

extension NormSample {
    /// Reads a norm sample: one row per person with an age, a θ, optionally an SE and a weight, and the
    /// categorical `variables` (other columns are ignored).
    ///
    /// Each problem is an error naming the line and column, the value (first 100 bytes) and what is allowed: an
    /// age that is not a number in [0, 130], a θ not in [−10, 10], an SE not in (0, 10], a weight not in
    /// (0, 1e12] (numbers in plain decimal notation: `DecimalNumber`), an empty category, a row of the wrong
    /// width; a missing or repeated column is an error naming the header. More than `maximumCount` rows is an
    /// error (the file is not read further). With `columns.scorer`, a response that is not 0/1/blank, a row with
    /// no answered item, or a header with no item of the bank is an error too.
    package static func load(csv path: String, columns: NormSampleColumns) throws -> NormSample {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else {
            throw InputError(file: path, message: "the file is empty; expected a header with \(columns.age),\(columns.theta)")
        }
        let header = try reader.headerFields()
        let headerLine = reader.line
        try CSVHeader.checkUnique(header, file: path, line: headerLine)
        func column(_ name: String, _ role: String) throws -> Int {
            guard let c = header.firstIndex(of: name) else {
                throw InputError(
                    file: path, line: headerLine,
                    message:
                        "no '\(name.escapingControlCharacters)' column (\(role)) in the header (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))"
                )
            }
            return c
        }
        let ageColumn = try column(columns.age, "the age column")
        let scorer = columns.scorer
        // Items in more than two categories: their cells are categories or the bank's labels (`CategoryCells`).
        let categoryCells = scorer.flatMap { CategoryCells(bank: $0.bank) }
        // With a scorer: the columns that are items of its bank, and their bank indices.
        let itemColumns = scorer.map { scorer in header.indices.filter { scorer.itemTable.index(of: header[$0]) != nil } } ?? []
        if scorer != nil && itemColumns.isEmpty {
            throw InputError(
                file: path, line: headerLine,
                message:
                    "no column of the header is an item of the bank, so there are no responses to score θ from (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))"
            )
        }
        let thetaColumn = scorer == nil ? try column(columns.theta, "the θ column") : -1
        let seColumn = scorer == nil ? try columns.standardError.map { try column($0, "the SE column") } : nil
        let weightColumn = try columns.weight.map { try column($0, "the weight column") }
        let variableColumns = try columns.variables.map { try column($0, "a variable of the margins") }

        var ages: [Double] = [], thetas: [Double] = [], ses: [Double] = [], weights: [Double] = []
        var categories = [[String]](repeating: [], count: variableColumns.count)
        var errors = ErrorCollector()
        var rows = 0
        while try reader.nextRow() {
            let line = reader.line
            rows += 1
            guard rows <= maximumCount else {
                throw InputError(
                    file: path, line: line,
                    message:
                        "the sample has more than \(maximumCount) rows, the most a norm sample may have (NormSample.maximumCount); use a random subsample"
                )
            }
            guard reader.fieldCount == header.count else {
                errors.add(reader.fieldCountError(expected: header.count))
                continue
            }
            func number(_ c: Int, _ name: String, _ range: NumberRange, _ allowed: String) -> Double? {
                let text = reader.string(c).trimmingCharacters(in: .whitespaces)
                guard let v = DecimalNumber.parse(text), range.contains(v) else {
                    errors.add(InputError(file: path, line: line, column: c + 1, message: "\(name) \(TextFidelity.quoted(text)) is not \(allowed)"))
                    return nil
                }
                return v
            }
            let age = number(ageColumn, columns.age, allowedAges, "an age: a number in [0, 130] (years)")
            let theta: Double?, se: Double??
            if let scorer {
                (theta, se) = scored(scorer, itemColumns)
            } else {
                theta = number(thetaColumn, columns.theta, allowedThetas, "a θ: a number in [-10, 10]")
                // nil: no such column; .some(nil): a bad value (reported).
                se = seColumn.map { number($0, columns.standardError!, allowedStandardErrors, "a standard error: a number in (0, 10]") }
            }
            /// θ and SE scored from the row's responses; nil θ after reporting a problem.
            func scored(_ scorer: SessionScorer, _ itemColumns: [Int]) -> (Double?, Double??) {
                var ids: [String] = [], responses: [Int] = []
                for c in itemColumns {
                    if let categoryCells, let j = scorer.itemTable.index(of: header[c]), categoryCells.isCategoryItem(j) {
                        let v = reader.withField(c) { categoryCells.value($0, item: j) }
                        if v == ResponseCell.missingCategory { continue }
                        if v == ResponseCell.invalidCategory {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: c + 1,
                                    message:
                                        "column \(TextFidelity.quoted(header[c])): \(TextFidelity.quoted(reader.string(c))) is not a response; allowed: \(categoryCells.allowed(item: j))"
                                ))
                            return (nil, .some(nil))
                        }
                        ids.append(header[c])
                        responses.append(v)
                        continue
                    }
                    let cell = reader.withField(c) { ResponseCell.parse($0) }
                    switch cell {
                    case .missing: continue
                    case .invalid:
                        errors.add(
                            InputError(
                                file: path, line: line, column: c + 1,
                                message:
                                    "column \(TextFidelity.quoted(header[c])): \(TextFidelity.quoted(reader.string(c))) is not a response; allowed: \(ResponseCell.allowedDescription)"
                            ))
                        return (nil, .some(nil))
                    case .correct, .incorrect:
                        ids.append(header[c])
                        responses.append(cell == .correct ? 1 : 0)
                    }
                }
                guard !ids.isEmpty else {
                    errors.add(
                        InputError(
                            file: path, line: line, column: itemColumns[0] + 1,
                            message: "no answered item: θ cannot be scored from this row's responses"))
                    return (nil, .some(nil))
                }
                do {
                    let estimate = try scorer.score(itemIDs: ids, responses: responses).estimate
                    return (min(max(estimate.theta, allowedThetas.lower), allowedThetas.upper), .some(estimate.standardError))
                } catch {
                    errors.add(InputError(file: path, line: line, column: itemColumns[0] + 1, message: "the responses cannot be scored: \(error)"))
                    return (nil, .some(nil))
                }
            }
            let weight: Double?? = weightColumn.map { number($0, columns.weight!, allowedWeights, "a weight: a number in (0, 1e12]") }
            var values: [String] = []
            for (k, c) in variableColumns.enumerated() {
                let text = reader.string(c).trimmingCharacters(in: .whitespaces)
                if text.isEmpty {
                    errors.add(
                        InputError(file: path, line: line, column: c + 1, message: "\(columns.variables[k]) is empty; every person needs a category"))
                }
                values.append(text)
            }
            let seRead = se.map { $0 != nil } ?? true, weightRead = weight.map { $0 != nil } ?? true
            guard let age, let theta, seRead, weightRead, !values.contains(where: \.isEmpty) else { continue }
            ages.append(age)
            thetas.append(theta)
            if let se { ses.append(se!) }
            if let weight { weights.append(weight!) }
            for k in values.indices { categories[k].append(values[k]) }
        }
        try errors.throwIfAny()
        guard !ages.isEmpty else { throw InputError(file: path, line: headerLine, message: "the sample has no persons (only a header)") }
        var variables: [String: [String]] = [:]
        for (k, name) in columns.variables.enumerated() { variables[name] = categories[k] }
        do {
            return try NormSample(
                ages: ages, thetas: thetas, standardErrors: seColumn == nil && scorer == nil ? nil : ses,
                weights: weightColumn == nil ? nil : weights, variables: variables)
        } catch let error as PsychometricsError {
            throw InputError(file: path, message: error.message)
        }
    }
}

extension RakingTargets {
    /// Reads population margins: `variable,category,share`, one row per category (e.g. `education,high,0.30`).
    /// Each problem is an error naming the line and column: an empty variable or category, a share that is not a
    /// number in (0, 1], a (variable, category) given twice, and — on the variable's first line — shares of one
    /// variable that do not sum to 1 (±1e-6).
    package static func load(csv path: String) throws -> RakingTargets {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header variable,category,share") }
        let header = try reader.headerFields()
        let headerLine = reader.line
        try CSVHeader.checkUnique(header, file: path, line: headerLine)
        guard let v = header.firstIndex(of: "variable"), let c = header.firstIndex(of: "category"), let s = header.firstIndex(of: "share") else {
            throw InputError(
                file: path, line: headerLine,
                message: "the header needs variable, category and share (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))")
        }
        var margins: [RakingMargin] = []
        var firstLine: [String: Int] = [:], seen: [String: Int] = [:], sums: [String: Double] = [:]
        var order: [String] = []
        var errors = ErrorCollector()
        while try reader.nextRow(fields: header.count, collecting: &errors) {
            let line = reader.line
            let variable = reader.string(v).trimmingCharacters(in: .whitespaces)
            let category = reader.string(c).trimmingCharacters(in: .whitespaces)
            let text = reader.string(s).trimmingCharacters(in: .whitespaces)
            if variable.isEmpty {
                errors.add(InputError(file: path, line: line, column: v + 1, message: "variable is empty; name a column of the sample")); continue
            }
            if category.isEmpty {
                errors.add(InputError(file: path, line: line, column: c + 1, message: "category is empty; a category must be non-empty")); continue
            }
            guard let share = DecimalNumber.parse(text), share > 0, share <= 1 else {
                errors.add(InputError(file: path, line: line, column: s + 1, message: "share \(TextFidelity.quoted(text)) is not a number in (0, 1]"))
                continue
            }
            let key = variable + "\u{0}" + category
            if let previous = seen[key] {
                errors.add(
                    InputError(
                        file: path, line: line, column: c + 1,
                        message: "\(variable) = \(TextFidelity.quoted(category)) already given on line \(previous)"))
                continue
            }
            seen[key] = line
            if firstLine[variable] == nil { firstLine[variable] = line; order.append(variable) }
            sums[variable, default: 0] += share
            margins.append(RakingMargin(variable: variable, category: category, share: share))
        }
        for variable in order where abs(sums[variable]! - 1) > shareSumTolerance {
            errors.add(
                InputError(
                    file: path, line: firstLine[variable]!, column: v + 1,
                    message: "the shares of \(variable) sum to \(String(format: "%.6f", sums[variable]!)), not 1 (allowed ±\(shareSumTolerance))"))
        }
        try errors.throwIfAny()
        guard !margins.isEmpty else { throw InputError(file: path, line: headerLine, message: "the margins file lists no margins (only a header)") }
        do {
            return try RakingTargets(margins)
        } catch let error as PsychometricsError {
            throw InputError(file: path, message: error.message)
        }
    }
}

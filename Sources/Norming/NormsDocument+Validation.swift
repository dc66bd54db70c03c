import Foundation
import Psychometrics

extension NormsDocument {
    /// Reads a NORMS.json document strictly: RFC 8259 syntax, no unknown or repeated key at any level, the right
    /// types, whole numbers where counts are (`JSONInput`), then every value in range (`validationProblems`).
    /// - Throws: `InputError` / `InputErrors` naming `file`, and the line, column or key of each problem.
    package static func decode(from data: Data, file: String) throws -> NormsDocument {
        let document = try JSONInput.decode(NormsDocument.self, from: data, file: file)
        let problems = document.validationProblems()
        if problems.count == 1 { throw InputError(file: file, message: problems[0]) }
        guard problems.isEmpty else { throw InputErrors(problems.map { InputError(file: file, message: $0) }) }
        return document
    }

    /// The document as JSON text: keys sorted, two-space indentation, every number the shortest decimal that reads
    /// back to the same double; ends with a newline.
    /// - Throws: `PsychometricsError.numericalFailure` if a number is not finite (never written).
    package func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
        } catch {
            throw PsychometricsError(.numericalFailure, "the norms document holds a number that is not finite: \(error)")
        }
    }

    /// The norms, ready to score with (`AgeNormScale`).
    /// - Throws: `PsychometricsError.invalidParameters` when `validationProblems` finds any.
    package func ageNorms() throws -> AgeNorms {
        let problems = validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidParameters, "invalid norms document: " + problems.joined(separator: "; ")) }
        let range = AgeStandardization(minimum: ages.minimum, maximum: ages.maximum)
        let model: AgeNorms.Model
        switch method {
        case .continuous:
            let c = self.model!.coefficients
            model = .continuous(
                ContinuousNorms(
                    ages: range, location: AgePolynomial(coefficients: c.mu), logScale: AgePolynomial(coefficients: c.logSigma),
                    skewness: c.epsilon.map(AgePolynomial.init), logTailWeight: c.logDelta.map(AgePolynomial.init)))
        case .bands:
            model = .bands(
                BandNorms(
                    bands: bands!.map { b in
                        NormBand(
                            lowerAge: b.ageMinimum, upperAge: b.ageMaximum, count: b.n, effectiveN: b.effectiveN,
                            distribution: SinhArcsinh(location: b.mu, scale: b.sigma, skewness: b.epsilon, tailWeight: b.delta),
                            degrees: SHASHDegrees(
                                location: 0, logScale: 0, skewness: b.family == "normal" ? nil : 0, logTailWeight: b.family == "shash" ? 0 : nil))
                    }))
        }
        return AgeNorms(name: name, version: version, model: model, extrapolation: ages.extrapolation)
    }

    /// Every value out of range, naming its key: `"ages.maximum" must be greater than "ages.minimum" …`.
    package func validationProblems() -> [String] {
        var problems: [String] = []
        func check(_ value: Double, _ range: NumberRange, _ key: String) {
            if !range.contains(value) { problems.append("\"\(key)\" must be in \(range), got \(value)") }
        }
        if format != Self.currentFormat {
            problems.append("\"format\" is '\(format.escapingControlCharacters)'; this iqscore reads \(Self.currentFormat)")
        }
        if name.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("\"name\" must not be empty") }
        if version.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("\"version\" must not be empty") }
        check(ages.minimum, NormSample.allowedAges, "ages.minimum")
        check(ages.maximum, NormSample.allowedAges, "ages.maximum")
        check(ages.extrapolation, .closed(0, 130), "ages.extrapolation")
        if !(ages.minimum < ages.maximum) {
            problems.append("\"ages.maximum\" must be greater than \"ages.minimum\", got \(ages.minimum)–\(ages.maximum)")
        }
        if !(1...NormSample.maximumCount ~= sample.n) { problems.append("\"sample.n\" must be 1…\(NormSample.maximumCount), got \(sample.n)") }
        check(sample.effectiveN, .aboveUpTo(0, Double(max(sample.n, 1)) * (1 + 1e-9)), "sample.effective_n")
        check(sample.sumOfWeights, .aboveUpTo(0, 1e20), "sample.sum_of_weights")
        check(sample.designEffect, .closed(1 - 1e-9, 1e9), "sample.design_effect")
        if let se = sample.meanStandardError { check(se, NormSample.allowedStandardErrors, "sample.mean_standard_error") }

        let w = weighting
        if !WeightingSummary.methods.contains(w.method) {
            problems.append(
                "\"weighting.method\" must be one of \(WeightingSummary.methods.joined(separator: ", ")), got '\(w.method.escapingControlCharacters)'"
            )
        }
        if let i = w.iterations, i < 0 { problems.append("\"weighting.iterations\" must be ≥ 0, got \(i)") }
        if let e = w.maximumMarginError { check(e, .closed(0, 1), "weighting.maximum_margin_error") }
        if let t = w.tolerance { check(t, .open(0, 1), "weighting.tolerance") }
        if let k = w.trimFactor { check(k, .aboveUpTo(1, 1000), "weighting.trim_factor") }
        if !(0...max(sample.n, 0) ~= w.trimmed) { problems.append("\"weighting.trimmed\" must be 0…\(sample.n) (sample.n), got \(w.trimmed)") }
        if w.trimRounds < 0 { problems.append("\"weighting.trim_rounds\" must be ≥ 0, got \(w.trimRounds)") }
        check(w.largestWeightRatio, .closed(1 - 1e-9, 1e12), "weighting.largest_weight_ratio")
        check(w.designEffect, .closed(1 - 1e-9, 1e9), "weighting.design_effect")
        check(w.effectiveN, .aboveUpTo(0, Double(max(sample.n, 1)) * (1 + 1e-9)), "weighting.effective_n")
        for (k, m) in w.margins.enumerated() {
            let key = "weighting.margins[\(k)]"
            if m.variable.isEmpty || m.category.isEmpty { problems.append("\"\(key)\" needs a variable and a category") }
            check(m.target, .aboveUpTo(0, 1), key + ".target")
            check(m.achieved, .closed(0, 1), key + ".achieved")
            check(m.sample, .closed(0, 1), key + ".sample")
            if m.count < 0 { problems.append("\"\(key).n\" must be ≥ 0, got \(m.count)") }
        }

        switch method {
        case .continuous:
            if bands != nil { problems.append("\"bands\" belongs to method bands; this document's method is continuous") }
            if let m = model { problems += continuousProblems(m) } else { problems.append("method continuous needs \"model\"") }
        case .bands:
            if model != nil { problems.append("\"model\" belongs to method continuous; this document's method is bands") }
            if let b = bands { problems += bandProblems(b) } else { problems.append("method bands needs \"bands\"") }
        }
        for (k, row) in criterionTable.enumerated() {
            let key = "criterion_table[\(k)]"
            if !row.logLikelihood.isFinite { problems.append("\"\(key).log_likelihood\" must be finite") }
            if !row.value.isFinite { problems.append("\"\(key).value\" must be finite") }
            if row.parameters < 1 { problems.append("\"\(key).parameters\" must be ≥ 1, got \(row.parameters)") }
        }
        let p = percentileCheck
        if p.ageCount < 1 || p.percentileCount < 1 || p.crossings < 0 {
            problems.append(
                "\"percentile_check\" needs ages ≥ 1, percentiles ≥ 1, crossings ≥ 0, got \(p.ageCount), \(p.percentileCount), \(p.crossings)")
        }
        if !p.minimumGap.isFinite || !p.minimumGapAge.isFinite { problems.append("\"percentile_check\" gaps must be finite") }
        return problems
    }

    private func continuousProblems(_ m: ContinuousModel) -> [String] {
        var problems: [String] = []
        if m.family != "shash" { problems.append("\"model.family\" must be 'shash', got '\(m.family.escapingControlCharacters)'") }
        if m.basis != "legendre" { problems.append("\"model.basis\" must be 'legendre', got '\(m.basis.escapingControlCharacters)'") }
        let d = SHASHDegrees(location: m.degrees.mu, logScale: m.degrees.logSigma, skewness: m.degrees.epsilon, logTailWeight: m.degrees.logDelta)
        problems += d.validationProblems(what: "\"model.degrees\"")
        let c = m.coefficients
        func count(_ values: [Double]?, _ degree: Int?, _ key: String) {
            switch (values, degree) {
            case (nil, nil): break
            case (let v?, let g?):
                if v.count != g + 1 { problems.append("\"model.coefficients.\(key)\" must have \(g + 1) values (degree \(g)), got \(v.count)") }
                if let bad = v.firstIndex(where: { !($0.isFinite && abs($0) <= 1e6) }) {
                    problems.append("\"model.coefficients.\(key)[\(bad)]\" must be a finite number within ±1e6, got \(v[bad])")
                }
            case (nil, let g?): problems.append("\"model.coefficients.\(key)\" is missing but \"model.degrees.\(key)\" is \(g)")
            case (.some, nil): problems.append("\"model.coefficients.\(key)\" is given but \"model.degrees.\(key)\" is null")
            }
        }
        count(c.mu, m.degrees.mu, "mu")
        count(c.logSigma, m.degrees.logSigma, "log_sigma")
        count(c.epsilon, m.degrees.epsilon, "epsilon")
        count(c.logDelta, m.degrees.logDelta, "log_delta")
        if !m.logLikelihood.isFinite { problems.append("\"model.log_likelihood\" must be finite") }
        if m.iterations < 0 { problems.append("\"model.iterations\" must be ≥ 0, got \(m.iterations)") }
        if problems.isEmpty, ages.minimum < ages.maximum {
            let norms = ContinuousNorms(
                ages: AgeStandardization(minimum: ages.minimum, maximum: ages.maximum),
                location: AgePolynomial(coefficients: c.mu), logScale: AgePolynomial(coefficients: c.logSigma),
                skewness: c.epsilon.map(AgePolynomial.init), logTailWeight: c.logDelta.map(AgePolynomial.init))
            if !norms.isUsable {
                problems.append("\"model.coefficients\" give a scale or tail weight outside e^±20 (or a non-finite parameter) within the age range")
            }
        }
        return problems
    }

    private func bandProblems(_ bands: [BandEntry]) -> [String] {
        var problems: [String] = []
        if bands.isEmpty { problems.append("\"bands\" must hold at least one band") }
        for (k, b) in bands.enumerated() {
            let key = "bands[\(k)]"
            if !(b.ageMinimum < b.ageMaximum) {
                problems.append("\"\(key).age_maximum\" must be greater than \"\(key).age_minimum\", got \(b.ageMinimum)–\(b.ageMaximum)")
            }
            if k == 0, b.ageMinimum != ages.minimum {
                problems.append("\"bands[0].age_minimum\" must equal \"ages.minimum\" (\(ages.minimum)), got \(b.ageMinimum)")
            }
            if k > 0, b.ageMinimum != bands[k - 1].ageMaximum {
                problems.append(
                    "\"\(key).age_minimum\" must equal \"bands[\(k - 1)].age_maximum\" (\(bands[k - 1].ageMaximum)), got \(b.ageMinimum): bands are contiguous"
                )
            }
            if k == bands.count - 1, b.ageMaximum != ages.maximum {
                problems.append("\"\(key).age_maximum\" must equal \"ages.maximum\" (\(ages.maximum)), got \(b.ageMaximum)")
            }
            if b.n < 1 { problems.append("\"\(key).n\" must be ≥ 1, got \(b.n)") }
            if !(b.effectiveN > 0 && b.effectiveN <= Double(max(b.n, 1)) * (1 + 1e-9)) {
                problems.append("\"\(key).effective_n\" must be in (0, n], got \(b.effectiveN)")
            }
            if !BandEntry.families.contains(b.family) {
                problems.append(
                    "\"\(key).family\" must be one of \(BandEntry.families.joined(separator: ", ")), got '\(b.family.escapingControlCharacters)'")
            }
            if !NumberRange.closed(-10, 10).contains(b.mu) { problems.append("\"\(key).mu\" must be in [-10, 10], got \(b.mu)") }
            if !NumberRange.aboveUpTo(0, 100).contains(b.sigma) { problems.append("\"\(key).sigma\" must be in (0, 100], got \(b.sigma)") }
            if !NumberRange.closed(-100, 100).contains(b.epsilon) { problems.append("\"\(key).epsilon\" must be in [-100, 100], got \(b.epsilon)") }
            if !NumberRange.aboveUpTo(0, 100).contains(b.delta) { problems.append("\"\(key).delta\" must be in (0, 100], got \(b.delta)") }
        }
        return problems
    }
}

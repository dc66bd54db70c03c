import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

/// Responses in more than two categories read from files and scored: `ResponseFileOptions.categoryResponses`
/// for calibration, the bank's items for `SessionScorer` and `BatchScorer` (every reading path: long serial and
/// parallel, wide, contiguous and regrouped, give the same scores as the estimator called directly).
@Suite("Category responses: reading, session scoring, batch scoring")
struct CategoryResponseTests {
    @Test("categoryResponses reads 0…255 per item (K = largest + 1), long and wide alike; other cells are named")
    func reading() throws {
        let files = try CSVFixtures()
        var options = ResponseFileOptions()
        options.categoryResponses = true
        let wide = try files.write("wide.csv", "id,g,q\n1,3,1\n2,0,NA\n3,2,0\n4, 1 ,\n")
        let long = try files.write("long.csv", "session_id,item_id,response\n1,g,3\n1,q,1\n2,g,0\n3,g,2\n3,q,0\n4,g,1\n")
        for threads in [1, 2] {
            let (a, _) = try ResponseMatrix.load(csv: wide, options: options, threads: threads)
            let (b, _) = try ResponseMatrix.load(csv: long, options: options, threads: threads)
            #expect(a.categoryCounts == [4, 2] && a.responses == [3, 1, 0, 2, 0, 1])
            #expect(b.categoryCounts == a.categoryCounts && b.responses == a.responses && b.itemIndices == a.itemIndices)
        }
        for (text, phrase) in [
            ("id,g\n1,-1\n", "'-1' is not a response; allowed: a whole number 0…255"),
            ("id,g\n1,256\n", "'256' is not a response"), ("id,g\n1,1.5\n", "'1.5' is not a response"),
            ("id,g\n1,true\n", "'true' is not a response")
        ] {
            let path = try files.write("bad.csv", text)
            #expect(throws: (any Error).self) { try ResponseMatrix.load(csv: path, options: options) }
            do { _ = try ResponseMatrix.load(csv: path, options: options) } catch {
                #expect("\(error)".contains(phrase) && "\(error)".contains("bad.csv:2:2"), "\(error)")
            }
        }
        // Without the option a 2 is still refused as a 0/1 response.
        #expect(throws: (any Error).self) { try ResponseMatrix.load(csv: wide) }
    }

    /// A bank: a 2PL item, a graded item (labels 1…4), a gpcm item, a nominal item; domains x and y.
    static func bank() throws -> ItemBank {
        var items = [
            BankItem(itemID: "q", model: .twoPL, parameters: ItemParameters(discrimination: 1.3, difficulty: 0.2), metadata: ["domain": "x"])
        ]
        var graded = BankItem(itemID: "g", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0), metadata: ["domain": "x"])
        graded.categoryModel = try CategoryBankItem(kind: .graded, values: [1.4, -1, 0.2, 1.1], responseLabels: ["1", "2", "3", "4"])
        var gpcm = BankItem(itemID: "p", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0), metadata: ["domain": "y"])
        gpcm.categoryModel = try CategoryBankItem(kind: .generalizedPartialCredit, values: [0.9, -0.5, 0.7])
        var nominal = BankItem(itemID: "n", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0), metadata: ["domain": "y"])
        nominal.categoryModel = try CategoryBankItem(kind: .nominal, values: [0, 0.5, 1.2, 0, 0.4, -0.3], responseLabels: ["A", "B", "C"])
        items += [graded, gpcm, nominal]
        return ItemBank(items: items, metadataColumns: ["domain"])
    }

    @Test("SessionScorer: categories checked per item; θ is the estimator's; raw scores leave nominal options out")
    func sessionScorer() throws {
        let bank = try Self.bank()
        let scorer = try SessionScorer(bank: bank, scale: IQScale())
        let estimator = try AbilityEstimator(items: bank.items.map(\.responseModel))
        let score = try scorer.score(itemIDs: ["q", "g", "p", "n"], responses: [1, 3, 2, 2])
        let direct = try estimator.estimate(items: [0, 1, 2, 3], responses: [1, 3, 2, 2])
        #expect(score.estimate.theta == direct.theta && score.estimate.standardError == direct.standardError)
        // Raw score 1 + 3 + 2 (the nominal option is no score) of a highest 1 + 3 + 2.
        #expect(score.estimate.correctCount == 6 && score.estimate.maximumScore == 6 && score.estimate.isPerfect)
        #expect(score.score.flags.contains(.perfectScore))
        #expect(score.domainAnswered == [2, 2] && score.domainCorrect == [4, 2])
        #expect(throws: PsychometricsError.self) { try scorer.score(itemIDs: ["g"], responses: [4]) }
        #expect(throws: PsychometricsError(.invalidResponse, "a response to item 'p' must be one of its categories 0…2; got 3", position: 0)) {
            try scorer.score(itemIDs: ["p"], responses: [3])
        }
        #expect(throws: PsychometricsError(.invalidResponse, "a response to item 'q' must be 0 or 1; got 2", position: 0)) {
            try scorer.score(itemIDs: ["q"], responses: [2])
        }
        // A session of the nominal item alone has no raw score to be perfect or zero in.
        let nominalOnly = try scorer.score(itemIDs: ["n"], responses: [0])
        #expect(nominalOnly.estimate.maximumScore == 0 && !nominalOnly.estimate.isZero && !nominalOnly.estimate.isPerfect)
    }

    @Test("BatchScorer: long (serial, parallel, regrouped) and wide files give the estimator's scores; bad cells are rejected per item")
    func batch() throws {
        let files = try CSVFixtures()
        let bank = try Self.bank()
        let scorer = try SessionScorer(bank: bank, scale: IQScale())
        // Cells as the files hold them: 0/1, the graded item's labels 1…4, gpcm 0…2, nominal letters (any case).
        let letters = ["A", "b", "C"]
        let sessions: [(String, [String])] = (0..<40).map { i -> (String, [String]) in
            let cells: [String] = [String(i % 2), String(1 + i % 4), String(i % 3), letters[i % 3]]
            return ("s\(i)", cells)
        }
        let ids = ["q", "g", "p", "n"]
        var long = "session_id,item_id,response\n", interleaved = "session_id,item_id,response\n", wide = "session_id,q,g,p,n\n"
        for (id, cells) in sessions {
            for (j, cell) in cells.enumerated() { long += "\(id),\(ids[j]),\(cell)\n" }
            wide += "\(id),\(cells.joined(separator: ","))\n"
        }
        for j in 0..<4 { for (id, cells) in sessions { interleaved += "\(id),\(ids[j]),\(cells[j])\n" } }
        let bad = "session_id,item_id,response\nb1,g,0\nb2,p,3\nb3,n,D\nb4,q,2\n"
        let outputs = [
            try BatchFixtures.run(scorer, [try files.write("long.csv", long + bad.dropFirst(28))], in: files, name: "serial", parallel: false),
            try BatchFixtures.run(
                scorer, [try files.write("long2.csv", long + bad.dropFirst(28))], in: files, name: "parallel", workers: 2, chunkBytes: 256),
            try BatchFixtures.run(scorer, [try files.write("inter.csv", interleaved + bad.dropFirst(28))], in: files, name: "regrouped")
        ]
        let wideOut = try BatchFixtures.run(scorer, [try files.write("wide.csv", wide)], in: files, name: "wide")
        let estimator = try AbilityEstimator(items: bank.items.map(\.responseModel))
        for output in outputs + [wideOut] {
            #expect(output.scoreRows.count == 40)
            for (row, (_, cells)) in zip(output.scoreRows, sessions) {
                let option: UInt8 = cells[3].uppercased() == "A" ? 0 : cells[3].uppercased() == "B" ? 1 : 2
                let categories: [UInt8] = [UInt8(cells[0])!, UInt8(cells[1])! - 1, UInt8(cells[2])!, option]
                let direct = try estimator.estimate(items: [0, 1, 2, 3], responses: categories)
                #expect(row[3] == String(format: "%.4f", direct.theta), "\(row)")
                let raw = Int(categories[0]) + Int(categories[1]) + Int(categories[2])
                #expect(Int(row[2]) == raw)
            }
        }
        for output in outputs {
            let reasons = Dictionary(output.rejectRows.map { ($0[0], $0[4]) }, uniquingKeysWith: { a, _ in a })
            #expect(
                reasons["b1"] == "response '0' is not a response to item 'g'; allowed: 1, 2, 3, 4, or empty/NA for not administered", "\(reasons)")
            #expect(reasons["b2"] == "response '3' is not a response to item 'p'; allowed: 0…2, or empty/NA for not administered")
            #expect(reasons["b3"] == "response 'D' is not a response to item 'n'; allowed: A, B, C, or empty/NA for not administered")
            #expect(reasons["b4"]?.contains("is not a response; allowed: 1, 0, true, false") == true, "\(reasons)")
        }
        #expect(outputs[0].scores == outputs[1].scores && outputs[0].scores == outputs[2].scores)
    }
}

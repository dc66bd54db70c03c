import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

/// Banks of items scored in more than two categories: iqscore's columns written and read back, mirt 1.47's
/// `coef()` tables (IRT and slope–intercept form, `Fixtures/mirt-banks`, made by `make.R` there) read as they
/// are and scoring exactly as mirt, and every malformed row named.
@Suite("Bank files with graded, gpcm, pcm and nominal items")
struct CategoryBankTests {
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/mirt-banks/\(name)").path
    }

    static func load(_ text: String, _ reading: CategoryItemReading = .read()) throws -> ItemBank {
        let files = try CSVFixtures()
        return try ItemBank.load(csv: try files.write("BANK.csv", text), categoryItems: reading)
    }

    /// The load's error text (empty when it loads).
    static func failure(_ text: String, _ reading: CategoryItemReading = .read()) -> String {
        do { _ = try load(text, reading); return "" } catch { return "\(error)" }
    }

    /// A mixed bank: a 3PL item, a graded item with response labels and SEs, a pcm item, a nominal item.
    static func mixed() throws -> ItemBank {
        var items = [
            BankItem(
                itemID: "q1", model: .threePL, parameters: ItemParameters(discrimination: 1.2, difficulty: -0.5, guessing: 0.2),
                standardErrors: ItemStandardErrors(discrimination: 0.1, difficulty: 0.2, guessing: 0.03),
                responses: 300, pValue: 0.7, metadata: ["domain": "logic"])
        ]
        var graded = BankItem(
            itemID: "g1", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0),
            responses: 280, pValue: 0.55, flags: ["categories collapsed"], metadata: ["domain": "math"])
        graded.categoryModel = try CategoryBankItem(
            kind: .graded, values: [1.5, -1.25, 0.5, 2], standardErrors: [0.12, 0.2, 0.1, 0.3],
            responseLabels: ["0", "1", "3", "4"])
        var pcm = BankItem(itemID: "p1", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0), metadata: ["domain": "math"])
        pcm.categoryModel = try CategoryBankItem(kind: .partialCredit, values: [1, 0.5, -0.25], standardErrors: [nil, 0.1, 0.1])
        var nominal = BankItem(
            itemID: "n1", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0), metadata: ["domain": "verbal"])
        nominal.categoryModel = try CategoryBankItem(kind: .nominal, values: [0, 0.4, 1.1, 0, 0.3, -0.2], responseLabels: ["A", "B", "C"])
        items += [graded, pcm, nominal]
        return ItemBank(items: items, metadataColumns: ["domain"])
    }

    @Test("a mixed bank is written with a column per value and reads back to the same items")
    func roundTrip() throws {
        let bank = try Self.mixed()
        let text = bank.csv()
        let header = text.split(separator: "\n")[0]
        #expect(
            header
                == "item_id,model,a,b,c,se_a,se_b,se_c,n_responses,p_value,flags,categories,b1,b2,b3,a_0,a_1,a_2,c_0,c_1,c_2,se_b1,se_b2,se_b3,se_a_0,se_a_1,se_a_2,se_c_0,se_c_1,se_c_2,domain"
        )
        #expect(
            text.contains(
                "g1,graded,1.500000,,,0.120000,,,280,0.550000,categories collapsed,0;1;3;4,-1.250000,0.500000,2.000000,,,,,,,0.200000,0.100000,0.300000,"
            ))
        let back = try Self.load(text)
        #expect(back.layout?.isNative == true)
        #expect(back.items.map(\.modelName) == ["3pl", "graded", "pcm", "nominal"])
        for (a, b) in zip(bank.items, back.items) {
            #expect(a.categoryModel == b.categoryModel, "\(a.itemID)")
            #expect(a.parameters == b.parameters || a.categoryModel != nil)
            #expect(a.metadata == b.metadata && a.flags == b.flags && a.responses == b.responses)
        }
        #expect(back.items[1].categoryModel?.category(of: "3") == 2 && back.items[1].categoryModel?.category(of: "2") == nil)
        #expect(back.items[3].categoryModel?.category(of: "C") == 2)
        // A bank of 0/1 items only is written exactly as before: no category columns.
        let dichotomous = ItemBank(items: [bank.items[0]], metadataColumns: ["domain"])
        #expect(dichotomous.csv().hasPrefix("item_id,model,a,b,c,se_a,se_b,se_c,n_responses,p_value,flags,domain\n"))
    }

    /// mirt's parameters as iqscore's IRT form, per item.
    static func values(_ bank: ItemBank) -> [[Double]] { bank.items.map { $0.categoryModel?.values ?? $0.responseModel.parameterValues } }

    @Test("mirt's IRT and slope–intercept tables give the same items (graded, gpcm), within 1e-12 relative")
    func mirtForms() throws {
        for (model, irt, si) in [
            (ItemModelKind.graded, "graded_irt.csv", "graded_si.csv"), (.generalizedPartialCredit, "gpcm_irt.csv", "gpcm_si.csv")
        ] {
            let a = try ItemBank.load(csv: Self.fixture(irt), categoryItems: .read(thresholdsModel: model))
            let b = try ItemBank.load(csv: Self.fixture(si), categoryItems: .read())
            #expect(a.items.map(\.modelName) == [String](repeating: model.rawValue, count: 4))
            #expect(b.items.map(\.modelName) == [String](repeating: model.rawValue, count: 4))
            #expect(b.layout?.conversion.contains("slope–intercept") == true)
            for (x, y) in zip(Self.values(a).joined(), Self.values(b).joined()) {
                #expect(abs(x - y) <= 1e-12 * max(1, abs(x)), "\(irt): \(x) vs \(y)")
            }
        }
    }

    @Test("mirt's tables score as mirt: EAP of five Science persons within 1e-4 (graded, gpcm, nominal, 2PL beside graded)")
    func mirtEAP() throws {
        let banks: [String: ItemBank] = [
            "graded": try ItemBank.load(csv: Self.fixture("graded_irt.csv"), categoryItems: .read(thresholdsModel: .graded)),
            "gpcm": try ItemBank.load(csv: Self.fixture("gpcm_si.csv"), categoryItems: .read()),
            "nominal": try ItemBank.load(csv: Self.fixture("nominal_si.csv"), categoryItems: .read()),
            "mixed": try ItemBank.load(csv: Self.fixture("mixed_irt.csv"), categoryItems: .read(thresholdsModel: .graded))
        ]
        #expect(banks["mixed"]!.items.map(\.modelName) == ["2pl", "graded", "graded", "graded"])
        let rows = try String(contentsOfFile: Self.fixture("eap5.csv"), encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(rows.count == 20)
        for row in rows {
            let cells = row.split(separator: ",").map(String.init)
            let bank = banks[cells[0]]!
            let estimator = try AbilityEstimator(items: bank.items.map(\.responseModel))
            // mirt's data are coded 1…4 (the mixed bank's first item 0/1): category = response − 1.
            let responses = (0..<4).map { j in UInt8(Int(cells[1 + j])! - (bank.items[j].categoryModel == nil ? 0 : 1)) }
            let estimate = try estimator.estimate(items: Array(0..<4), responses: responses)
            #expect(abs(estimate.theta - Double(cells[5])!) < 1e-4, "\(row): \(estimate.theta)")
        }
    }

    @Test("a 0/1-only use refuses a graded row, naming the line and what reads it")
    func refusedWhereNotRead() throws {
        let text = "item_id,model,a,b,b1,b2\nq1,2pl,1,0,,\ng1,graded,1.2,,-1,1\n"
        let message = Self.failure(text, .refused)
        #expect(
            message.contains("BANK.csv:3:2") && message.contains("model graded is an item in more than two categories")
                && message.contains("0/1 items only"), "\(message)")
        #expect(try Self.load(text).items[1].categoryCount == 3)
    }

    @Test(
        "malformed rows are named with line, column and what is allowed",
        arguments: [
            // Thresholds of a graded item must increase.
            ("item_id,model,a,b1,b2\ng1,graded,1.2,1,-1\n", "BANK.csv:2:3", "graded thresholds must increase"),
            // A gap in the thresholds.
            ("item_id,model,a,b1,b2,b3\ng1,graded,1.2,-1,,1\n", "BANK.csv:2:6", "b3 is filled after the empty b2"),
            // b1… with no model says which to give.
            ("item_id,a,b1,b2\ng1,1.2,-1,1\n", "BANK.csv:2:3", "give the row a model column (graded, gpcm or pcm)"),
            // A pcm item's slope is 1.
            ("item_id,model,a,b1,b2\np1,pcm,1.3,-1,1\n", "BANK.csv:2:3", "a pcm (partial-credit Rasch) item has a = 1"),
            // A threshold that is a unit error.
            ("item_id,model,a,b1,b2\ng1,graded,1.2,-1,115\n", "BANK.csv:2:5", "b2 = 115; allowed -100 ≤ b ≤ 100"),
            // A 2PL row with a threshold cell filled.
            ("item_id,model,a,b,b1\nq1,2pl,1,0,0.5\n", "BANK.csv:2:5", "belongs to an item in more than two categories"),
            // Nominal slopes and intercepts in unequal numbers.
            ("item_id,model,a,a_0,a_1,a_2,c_0,c_1\nn1,nominal,,0,1,2,0,1\n", "BANK.csv:2:4", "a slope a_k and an intercept c_k per category"),
            // Labels not one per category.
            ("item_id,model,a,b1,b2,categories\ng1,graded,1.2,-1,1,A;B\n", "BANK.csv:2:6", "needs 3 response labels"),
            // mirt's gpcm with scoring values other than 0, 1, 2: that is a nominal item.
            ("item_id,model,a1,ak0,ak1,ak2,d0,d1,d2\ni1,gpcm,1,0,1.5,2,0,1,2\n", "BANK.csv:2:4", "give it model nominal"),
            // A non-number.
            ("item_id,model,a,b1,b2\ng1,graded,1.2,-1,x\n", "BANK.csv:2:5", "b2 'x' is not a number")
        ])
    func malformed(_ text: String, _ location: String, _ phrase: String) {
        let message = Self.failure(text)
        #expect(message.contains(location) && message.contains(phrase), "\(message)")
    }

    @Test("a polytomous calibration's bank: two-category items as 2pl/rasch, labels for data coded from 1, the latent SD of pcm")
    func fromCalibration() throws {
        // Science coded 1…4 (as mirt ships it) plus a 0/1 item: the bank says 1;2;3;4 and scores the data's cells.
        let science = try PolytomousCalibratorTests.science()
        var rows: [[UInt8?]] = []
        for i in 0..<science.personCount {
            var row = [UInt8?](repeating: nil, count: 5)
            for k in science.cells(ofPerson: i) { row[Int(science.itemIndices[k])] = science.responses[k] + 1 }
            row[4] = science.responses[science.cells(ofPerson: i).lowerBound] >= 2 ? 1 : 0
            rows.append(row)
        }
        let data = try ResponseMatrix(itemIDs: science.itemIDs + ["binary"], rows: rows, categoryCounts: [5, 5, 5, 5, 2])
        for kind in [ItemModelKind.graded, .partialCredit] {
            let fit = try PolytomousCalibrator().calibrate(data, model: kind)
            #expect(fit.warnings.allSatisfy { !$0.contains("collapsed") }, "\(fit.warnings)")
            let bank = try ItemBank(calibration: fit)
            #expect(bank.items.map(\.modelName) == [String](repeating: kind.rawValue, count: 4) + [kind == .graded ? "2pl" : "rasch"])
            #expect(bank.items[0].categoryModel?.responseLabels == ["1", "2", "3", "4"])
            #expect(bank.items[0].categoryModel?.category(of: "1") == 0 && bank.items[0].categoryModel?.category(of: "0") == nil)
            #expect(bank.items.allSatisfy { !$0.flags.contains("categories collapsed") })
            #expect(kind == .graded ? bank.latentScale.isStandard : abs(bank.latentScale.sd - fit.latentSD) < 1e-15)
            // Written and read back, it scores every person as the fit's own items do.
            let back = try Self.load(bank.csv())
            let mine = try AbilityEstimator(items: fit.items.map(\.item), latentScale: bank.latentScale)
            let read = try AbilityEstimator(items: back.items.map(\.responseModel), latentScale: back.latentScale)
            for i in 0..<20 {
                let cells = data.cells(ofPerson: i), items = cells.map { Int(data.itemIndices[$0]) }
                let categories = cells.map { k -> UInt8 in
                    let j = Int(data.itemIndices[k])
                    return UInt8(back.items[j].categoryModel?.category(of: String(data.responses[k])) ?? Int(data.responses[k]))
                }
                let a = try mine.estimate(items: items, responses: categories), b = try read.estimate(items: items, responses: categories)
                #expect(abs(a.theta - b.theta) < 1e-5, "person \(i): \(a.theta) vs \(b.theta)")
            }
        }
    }

    @Test(
        "a nominal item's key counts 1 in the raw score: points, maximum, expected score P_key; the bank's key cell matched in either case, a key that is no response refused with its line and column"
    )
    func nominalKey() throws {
        let item = NominalResponseItem(slopes: [0, 0.4, 1.1], intercepts: [0, 0.3, -0.2], key: 2)
        #expect((0..<3).map { item.points(category: $0) } == [0, 0, 1] && item.maximumScore == 1)
        #expect(abs(item.expectedScore(at: 0.7) - item.categoryProbabilities(at: 0.7)[2]) < 1e-15)
        let unkeyed = NominalResponseItem(slopes: [0, 0.4, 1.1], intercepts: [0, 0.3, -0.2])
        #expect(unkeyed.maximumScore == 0 && unkeyed.points(category: 2) == 0)
        // The key survives the calibrator's working-parameter round trip.
        #expect(item.withWorkingParameters(item.workingParameters)?.key == 2)
        // Raw score: a 0/1 item answered right, the nominal item's key chosen → 2 of 2.
        let estimator = try AbilityEstimator(items: [ItemParameters(discrimination: 1, difficulty: 0), item])
        let both = try estimator.estimate(items: [0, 1], responses: [1, 2]), other = try estimator.estimate(items: [0, 1], responses: [1, 1])
        #expect(both.correctCount == 2 && both.maximumScore == 2 && other.correctCount == 1)

        let header = "item_id,model,a,b,c,categories,a_0,a_1,a_2,c_0,c_1,c_2,key\n"
        let bank = try Self.load(header + "n1,nominal,,,,A;B;C,0,0.4,1.1,0,0.3,-0.2,c\nq1,2pl,1,0,,,,,,,,,B\n")
        #expect(bank.items[0].categoryModel?.key == 2 && bank.items[0].responseModel.maximumScore == 1)
        #expect(bank.items[1].responseModel.maximumScore == 1 && bank.items[1].metadata["key"] == "B")
        let failure = Self.failure(header + "n1,nominal,,,,A;B;C,0,0.4,1.1,0,0.3,-0.2,D\n")
        #expect(failure.contains(":2:13:") && failure.contains("item 'n1': key 'D' is none of the item's responses (allowed: A, B, C)"), "\(failure)")
        // Written back, the key cell reads to the same item.
        let again = try Self.load(bank.csv())
        #expect(again.items[0].categoryModel == bank.items[0].categoryModel)
    }

    @Test("the calibrator refuses a key that nobody chose, naming the item and the options fitted")
    func keyNobodyChose() throws {
        let rows: [[UInt8?]] = (0..<30).map { [UInt8($0 % 3), UInt8($0 % 2)] }
        let data = try ResponseMatrix(itemIDs: ["a", "b"], rows: rows, categoryCounts: [4, 2])
        #expect {
            _ = try PolytomousCalibrator().calibrate(data, model: .graded, itemModels: ["a": .nominal], keys: ["a": 3])
        } throws: { error in
            let e = error as? PsychometricsError
            return e?.code == .invalidOptions && e!.message.contains("item a: its key, option 3, was chosen by nobody")
                && e!.message.contains("fitted: 0, 1, 2")
        }
    }
}

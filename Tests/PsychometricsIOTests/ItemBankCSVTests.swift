import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

@Suite("ItemBank.load: hostile numbers, contradicting models, repeated columns")
struct ItemBankCSVTests {
    /// The error loading a bank with `text` gives, with the file's path replaced by `BANK.csv`.
    static func message(_ text: String, requirePositiveSlopes: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let files = try CSVFixtures()
        let path = try files.write("BANK.csv", text)
        do {
            _ = try ItemBank.load(csv: path, requirePositiveSlopes: requirePositiveSlopes)
            Issue.record("the bank loaded", sourceLocation: sourceLocation)
            return ""
        } catch {
            return "\(error)".replacingOccurrences(of: path, with: "BANK.csv")
        }
    }

    @Test("numbers Double(String) would accept are not numbers in a bank", arguments: ["0x1p3", "inf", "nan", "1e400", "-infinity", "1_0"])
    func notNumbers(_ text: String) throws {
        #expect(try Self.message("item_id,a,b\nq1,\(text),0\n") == "BANK.csv:2:2: error: item 'q1': a '\(text)' is not a number")
    }

    @Test("slopes and difficulties beyond their ranges, each with the allowed range")
    func ranges() throws {
        #expect(
            try Self.message("item_id,a,b,c\nq1,1e300,0,0\nq2,1,-1e300,0\nq3,1,100.5,0\nq4,51,0,0\n") == """
                BANK.csv:2:2: error: item 'q1': a = 1e+300; allowed 0 < a ≤ 50 (scoring needs a positive slope)
                BANK.csv:3:3: error: item 'q2': b = -1e+300; allowed -100 ≤ b ≤ 100
                BANK.csv:4:3: error: item 'q3': b = 100.5; allowed -100 ≤ b ≤ 100
                BANK.csv:5:2: error: item 'q4': a = 51; allowed 0 < a ≤ 50 (scoring needs a positive slope)
                """)
        // Item analysis reads negative slopes (to flag them), within the same magnitude.
        #expect(
            try Self.message("item_id,a,b\nq1,-60,0\n", requirePositiveSlopes: false)
                == "BANK.csv:2:2: error: item 'q1': a = -60; allowed -50 ≤ a ≤ 50")
    }

    @Test("a nearly flat item calibration writes (a = 0.003, b = 164) reads back; a unit error does not")
    func flatItems() throws {
        let files = try CSVFixtures()
        let bank = try ItemBank.load(csv: try files.write("FLAT.csv", "item_id,a,b\nq1,0.003,164\nq2,1,0\n"))
        #expect(bank.items[0].parameters.difficulty == 164)
        #expect(bank.parameterProblems().isEmpty)
        #expect(
            try Self.message("item_id,a,b\nq1,1.2,115\nq2,0.1,300\n") == """
                BANK.csv:2:3: error: item 'q1': b = 115; allowed -100 ≤ b ≤ 100
                BANK.csv:3:3: error: item 'q2': b = 300; allowed -100 ≤ b ≤ 100 (or |a·b| ≤ 20 for a nearly flat item, |a| < 0.2)
                """)
    }

    @Test("a model column the parameters contradict")
    func models() throws {
        #expect(
            try Self.message(
                "item_id,model,a,b,c\nq1,rasch,1.2,0,0\nq2,rasch,1,0,0.2\nq3,2pl,1.2,0,0.2\nq4,1pl,1,0,0.1\nq5,rasch,1.000000,0,0.000000\n") == """
                    BANK.csv:2:3: error: item 'q1': a = 1.2, but a rasch item has a = 1: the model column contradicts the parameters (use model 1pl or 2pl for other slopes)
                    BANK.csv:3:5: error: item 'q2': c = 0.2, but a rasch item has no lower asymptote (c = 0): the model column contradicts the parameters (use model 3pl, or drop the c value)
                    BANK.csv:4:5: error: item 'q3': c = 0.2, but a 2pl item has no lower asymptote (c = 0): the model column contradicts the parameters (use model 3pl, or drop the c value)
                    BANK.csv:5:5: error: item 'q4': c = 0.1, but a 1pl item has no lower asymptote (c = 0): the model column contradicts the parameters (use model 3pl, or drop the c value)
                    """)
    }

    @Test("standard errors, counts and p-values are checked, not dropped when they do not parse")
    func statistics() throws {
        #expect(
            try Self.message(
                "item_id,a,b,se_a,n_responses,p_value\nq1,1,0,nan,10,0.5\nq2,1,0,-1,10,0.5\nq3,1,0,0.1,ten,0.5\nq4,1,0,0.1,-3,0.5\nq5,1,0,0.1,10,1.5\nq6,1,0,,,\n"
            ) == """
                BANK.csv:2:4: error: item 'q1': se_a 'nan' is not a number
                BANK.csv:3:4: error: item 'q2': se_a = -1; allowed se_a ≥ 0
                BANK.csv:4:5: error: item 'q3': n_responses 'ten' is not a whole number ≥ 0
                BANK.csv:5:5: error: item 'q4': n_responses '-3' is not a whole number ≥ 0
                BANK.csv:6:6: error: item 'q5': p_value = 1.5; allowed 0 ≤ p_value ≤ 1
                """)
    }

    @Test("a column named twice is an error naming both columns")
    func repeatedColumns() throws {
        #expect(
            try Self.message("item_id,a,b,domain,a,domain\nq1,1,0,x,2,y\n") == """
                BANK.csv:1:5: error: column 'a' appears twice in the header (columns 2 and 5)
                BANK.csv:1:6: error: column 'domain' appears twice in the header (columns 4 and 6)
                """)
        let files = try CSVFixtures()
        let path = try files.write("items.csv", "item_id,domain,key,domain\nq1,x,A,y\n")
        #expect(throws: InputError(file: path, line: 1, column: 4, message: "column 'domain' appears twice in the header (columns 2 and 4)")) {
            try ItemMetadata.load(csv: path)
        }
    }

    @Test("a computed bank outside these ranges is listed by parameterProblems()")
    func parameterProblems() {
        let bank = ItemBank(items: [
            BankItem(itemID: "q1", model: .twoPL, parameters: ItemParameters(discrimination: 9183.27, difficulty: 0)),
            BankItem(itemID: "q2", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: -250))
        ])
        #expect(bank.parameterProblems() == ["item 'q1': a = 9183.27; allowed 0 < a ≤ 50", "item 'q2': b = -250; allowed -100 ≤ b ≤ 100"])
    }

    @Test("what calibrate writes reads back unchanged")
    func roundTrip() throws {
        let files = try CSVFixtures()
        let bank = ItemBank(items: [
            BankItem(itemID: "r1", model: .rasch, parameters: ItemParameters(discrimination: 1, difficulty: -0.5)),
            BankItem(
                itemID: "p1", model: .threePL, parameters: ItemParameters(discrimination: 1.3, difficulty: 0.25, guessing: 0.2),
                standardErrors: ItemStandardErrors(discrimination: 0.1, difficulty: 0.05, guessing: 0.02), responses: 120, pValue: 0.61)
        ])
        let path = try files.write("bank.csv", bank.csv())
        let read = try ItemBank.load(csv: path)
        #expect(read.items.map(\.model) == [.rasch, .threePL])
        #expect(read.items[1].responses == 120 && read.items[1].pValue == 0.61 && read.items[1].standardErrors.guessing == 0.02)
    }
}

import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

@Suite("BankLayout: banks written by mirt, catR and girth are read with a stated conversion, or refused")
struct BankLayoutTests {
    /// The native bank every foreign layout below describes: 3PL (a, b, c) = (1.2, −0.5, 0.2), (0.8, 1.25, 0).
    static let native = "item_id,a,b,c\nq1,1.2,-0.5,0.2\nq2,0.8,1.25,0\n"

    static func load(_ text: String) throws -> ItemBank {
        let files = try CSVFixtures()
        return try ItemBank.load(csv: try files.write("BANK.csv", text))
    }

    /// (a, b, c) of every item, in file order.
    static func parameters(_ bank: ItemBank) -> [[Double]] {
        bank.items.map { [$0.parameters.discrimination, $0.parameters.difficulty, $0.parameters.guessing] }
    }

    @Test("the native layout is read as such, with no conversion")
    func nativeLayout() throws {
        let bank = try Self.load(Self.native)
        #expect(bank.layout?.isNative == true)
        #expect(bank.layout?.conversion == "")
        #expect(Self.parameters(bank) == [[1.2, -0.5, 0.2], [0.8, 1.25, 0]])
    }

    @Test(
        "each foreign layout gives exactly the native parameters",
        arguments: [
            // mirt: write.csv(coef(mod, IRTpars = TRUE, simplify = TRUE)$items) — row names in an unnamed first column.
            (
                "\"\",\"a\",\"b\",\"g\",\"u\"\n\"q1\",1.2,-0.5,0.2,1\n\"q2\",0.8,1.25,0,1\n",
                "mirt IRTpars (a, b, g, u)", "c = g; u (upper asymptote) must be 1; item ids from the unnamed first column"
            ),
            // mirt slope–intercept: aθ + d with d = −ab: d = 0.6 for (1.2, −0.5), −1 for (0.8, 1.25).
            (
                "item_id,a1,d,g,u\nq1,1.2,0.6,0.2,1\nq2,0.8,-1,0,1\n", "mirt slope–intercept (a1, d, g, u)",
                "b = −d/a1; c = g; u (upper asymptote) must be 1"
            ),
            ("item_id,a1,d\nq1,1.2,0.6\nq2,0.8,-1\n", "mirt slope–intercept (a1, d)", "b = −d/a1"),
            // catR: an item bank matrix a, b, c, d where d is the upper asymptote.
            (
                ",a,b,c,d\nq1,1.2,-0.5,0.2,1\nq2,0.8,1.25,0,1\n", "catR (a, b, c, d)",
                "d (upper asymptote) must be 1; item ids from the unnamed first column"
            ),
            // girth's result dictionary as a pandas DataFrame.to_csv.
            (
                ",Discrimination,Difficulty,Guessing\nq1,1.2,-0.5,0.2\nq2,0.8,1.25,0\n", "girth (discrimination, difficulty, guessing)",
                "c = Guessing; item ids from the unnamed first column"
            )
        ])
    func foreign(_ text: String, _ name: String, _ conversion: String) throws {
        let bank = try Self.load(text)
        #expect(bank.layout?.name == name)
        #expect(bank.layout?.conversion == conversion)
        #expect(bank.layout?.isNative == false)
        #expect(bank.items.map(\.itemID) == ["q1", "q2"])
        let hasGuessing = name.contains(", g") || name.contains(", c") || name.contains("guessing")
        #expect(bank.items.map(\.model) == [hasGuessing ? .threePL : .twoPL, .twoPL])
        // Exact for the direct layouts; b = −d/a1 is one correctly rounded division: within 1 ulp.
        let native = Self.parameters(try Self.load(Self.native))
        let expected = hasGuessing ? native : native.map { [$0[0], $0[1], 0] }
        for (got, want) in zip(Self.parameters(bank), expected) {
            for (x, y) in zip(got, want) { #expect(abs(x - y) <= y.ulp) }
        }
        // The layout's columns are parameters, not metadata carried into the bank that calibrate writes.
        #expect(bank.metadataColumns.isEmpty)
    }

    @Test("an EAP score with a converted mirt bank equals the score with the native bank")
    func scoresAgree() throws {
        let mirt = try Self.load("item_id,a1,d,g,u\nq1,1.2,0.6,0.2,1\nq2,0.8,-1,0,1\n")
        let native = try Self.load(Self.native)
        let a = try AbilityEstimator(parameters: mirt.items.map(\.parameters)).estimate(items: [0, 1], responses: [1, 0])
        let b = try AbilityEstimator(parameters: native.items.map(\.parameters)).estimate(items: [0, 1], responses: [1, 0])
        #expect(abs(a.theta - b.theta) < 1e-14 && abs(a.standardError - b.standardError) < 1e-14)
    }

    @Test(
        "headers that fit no layout are refused with what to rename",
        arguments: [
            (
                "id,a,b\nq1,1,0\n",
                "BANK.csv:1: error: the bank header lacks item_id (found: id,a,b); name the item id column item_id (a file written by R's write.csv or pandas' to_csv, whose first header is empty, is read as such)"
            ),
            (
                "item_id,a1,a2,d\nq1,1,1,0\n",
                "BANK.csv:1: error: column 3 is 'a2', a second slope (a multidimensional model, such as mirt's bfactor): this command reads unidimensional banks (score reads a bifactor bank as a battery); give it a unidimensional bank (refit with one factor)"
            ),
            (
                "item_id,model,a_general,a_logic,a_spatial,d,c\nq1,2pl,1,0.5,0,0,0\n",
                "BANK.csv:1: error: a bifactor bank (slope columns a_general, a_logic, a_spatial): this command reads unidimensional banks (score reads a bifactor bank as a battery); give it a unidimensional bank (a 2PL or 3PL calibration)"
            ),
            (
                "item_id,a,b,c,g\nq1,1,0,0,0\n",
                "BANK.csv:1: error: the bank header names the lower asymptote twice (c and g) (found: item_id,a,b,c,g); keep one"
            ),
            (
                "item_id,a,d\nq1,1,0\n",
                "BANK.csv:1: error: the bank header has a and d but no b (found: item_id,a,d): if d is mirt's intercept (aθ + d), name the slope a1; if it is a difficulty, name it b"
            ),
            (
                "item_id,a1,b\nq1,1,0\n",
                "BANK.csv:1: error: the bank header has mirt's slope–intercept slope a1 with a difficulty b (found: item_id,a1,b): name the slope a (a, b: mirt's IRTpars = TRUE) or give the intercept d instead of b"
            ),
            ("item_id,a,a1,b\nq1,1,1,0\n", "BANK.csv:1: error: the bank header names the slope twice (a and a1) (found: item_id,a,a1,b); keep one"),
            (
                "item_id,a,b,d,u\nq1,1,0,1,1\n",
                "BANK.csv:1: error: the bank header names the upper asymptote twice (u and d) (found: item_id,a,b,d,u); keep one"
            ),
            (
                "item_id,slope,b\nq1,1,0\n",
                "BANK.csv:1: error: the bank header has no slope column (found: item_id,slope,b); name it a (or a1 as mirt writes, discrimination as girth)"
            ),
            (
                "item_id,a,beta\nq1,1,0\n",
                "BANK.csv:1: error: the bank header has no difficulty column (found: item_id,a,beta); name it b (or give mirt's intercept as a1,d; thresholds of items in more than two categories as b1, b2, …)"
            )
        ])
    func refused(_ text: String, _ message: String) throws {
        #expect(try ItemBankCSVTests.message(text) == message)
    }

    @Test("values a layout cannot hold: a 4PL upper asymptote, a zero slope with an intercept, model 4pl")
    func refusedValues() throws {
        #expect(
            try ItemBankCSVTests.message("item_id,a,b,g,u\nq1,1.2,-0.5,0.2,0.95\nq2,1,0,0,1\nq3,1,0,0,\n")
                == "BANK.csv:2:5: error: item 'q1': u = 0.95 is an upper asymptote below 1 (4PL); iqscore scores the Rasch, 1PL, 2PL and 3PL models (upper asymptote 1): refit without one"
        )
        #expect(
            try ItemBankCSVTests.message("item_id,a1,d\nq1,0,0.5\n", requirePositiveSlopes: false)
                == "BANK.csv:2:2: error: item 'q1': a1 = 0, so the difficulty b = −d/a1 is undefined; allowed -50 ≤ a ≤ 50 without 0")
        #expect(
            try ItemBankCSVTests.message("item_id,a1,d\nq1,1.2,150\n")
                == "BANK.csv:2:3: error: item 'q1': b = -125 (−d/a1 with d = 150); allowed -100 ≤ b ≤ 100")
        #expect(
            try ItemBankCSVTests.message("item_id,model,a,b,c\nq1,4PL,1,0,0.2\n")
                == "BANK.csv:2:2: error: item 'q1': model '4pl' has an upper asymptote below 1, which iqscore does not model; allowed rasch, 1pl, 2pl, 3pl (refit as 3pl)"
        )
    }
}

import Psychometrics
import PsychometricsIO
import Testing

@Suite("DecimalNumber: the one strict parser for numbers in input files")
struct DecimalNumberTests {
    @Test(
        "plain decimal notation is read exactly as Double(String) reads it",
        arguments: [
            ("1", 1.0), ("-1.5", -1.5), ("+2", 2.0), ("1e-3", 0.001), ("2.5E+2", 250.0), (".5", 0.5), ("3.", 3.0),
            ("0.000000", 0.0), ("-0", -0.0), ("1e-400", 0.0), ("12345678901234567890", 12345678901234567890.0)
        ])
    func accepts(_ text: String, _ value: Double) {
        #expect(DecimalNumber.parse(text) == value)
    }

    @Test(
        "everything else is rejected: hexadecimal, inf, nan, out of range, spaces (callers trim), stray characters",
        arguments: [
            "0x1p3", "0X10", "inf", "-inf", "infinity", "nan", "NaN", "1e400", "-1e400", "1.2.3", "", "+-1", "-", ".",
            "e5", "1e", "1e+", " 2 ", "2 ", "1,5", "1_000", "٣", "１", "1f", "0b1"
        ])
    func rejects(_ text: String) {
        #expect(DecimalNumber.parse(text) == nil)
    }

    @Test("whole numbers: optional sign and digits, within Int")
    func integers() {
        #expect(DecimalNumber.parseInteger("42") == 42)
        #expect(DecimalNumber.parseInteger("-7") == -7)
        #expect(DecimalNumber.parseInteger("+7") == 7)
        for text in ["", "+", "1.0", "1e3", "0x10", " 1", "99999999999999999999"] {
            #expect(DecimalNumber.parseInteger(text) == nil, "\(text)")
        }
    }
}

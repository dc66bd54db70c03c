import Foundation
import Psychometrics
@testable import PsychometricsIO
import Testing
import TestSupport

/// A bank read from bytes already in memory (`CSVSource.bytes`, how the server reads a bank once to hash and
/// parse it) is the bank read from its file: the same items, layout and metadata, or the same errors at the same
/// lines and columns.
@Suite("CSVSource: a bank from its bytes is the bank from its file")
struct CSVSourceTests {
    /// What reading gives, from the file and from its bytes: the value, or the error's text.
    enum Outcome<T: Equatable>: Equatable {
        case value(T)
        case error(String)
    }

    static func both<T: Equatable>(_ text: [UInt8], _ read: (CSVSource) throws -> T) throws -> (file: Outcome<T>, bytes: Outcome<T>) {
        let fixtures = try CSVFixtures()
        let path = try fixtures.write("bank.csv", bytes: text)
        func outcome(_ source: CSVSource) -> Outcome<T> {
            do { return .value(try read(source)) } catch { return .error("\(error)") }
        }
        return withExtendedLifetime(fixtures) { (outcome(.path(path)), outcome(.bytes(text, name: path))) }
    }

    static let banks: [String] = [
        "item_id,a,b,domain\ni1,1.2,-0.5,logic\ni2,0.8,0.3,math\n",
        "\u{FEFF}item_id,a,b,c\r\ni1,1.2,-0.5,0.2\r\n\r\ni2,0.8,0.3,0.1",
        "item_id;a;b;domain\ni1;1,2;-0,5;logic\ni2;0,8;0,3;math\n",
        "item_id,a,b,note\ni1,1.2,-0.5,\"two\nlines\"\ni2,0.8,0.3,\"a \"\"quoted\"\" word\"\n",
        "\"\",\"a1\",\"d\",\"g\",\"u\"\n\"i1\",1.2,0.6,0,1\n\"i2\",0.8,-0.24,0,1\n",
        "item_id,a,b\ni1,1.2\n",
        "item_id,a,b\ni1,1.2,\"-0.5\n",
        "item_id,a,b\ni1,1.2,x\ni1,1,0\n",
        ""
    ]

    @Test("0/1 and foreign banks, quoted fields, and broken files", arguments: banks)
    func itemBanks(_ text: String) throws {
        let (file, bytes) = try Self.both(Array(text.utf8)) { try ItemBank.load($0, categoryItems: .read()) }
        #expect(file == bytes)
    }

    /// A record longer than the limit is refused from bytes as from the file: the same error at the same line
    /// (with a 64-byte limit here; 16 MiB by default). A record at the limit reads.
    @Test("the record limit holds for bytes as for the file", arguments: [63, 64, 65, 200])
    func recordLimit(length: Int) throws {
        let long = "i2," + String(repeating: "9", count: length - 4) + "\n"
        let text = Array(("item_id,a\ni1,1\n" + long + "i3,1\n").utf8)
        let fixtures = try CSVFixtures()
        let path = try fixtures.write("long.csv", bytes: text)
        func rows(_ reader: CSVReader) -> String {
            var count = 0
            do {
                while try reader.nextRow() { count += 1 }
                return "\(count) rows"
            } catch { return "\(error)" }
        }
        let file = rows(try CSVReader(path: path, maxRecordBytes: 64))
        let bytes = rows(CSVReader(bytes: text, name: path, maxRecordBytes: 64))
        #expect(file == bytes)
        if length <= 64 {
            #expect(bytes == "4 rows")
        } else {
            #expect(bytes.contains("\(path):3") && bytes.contains("a record longer than 64 bytes starts here"))
        }
    }

    @Test("a bifactor bank and the battery it makes")
    func battery() throws {
        let text = Array(
            "item_id,a_general,a_x,a_y,d,c,domain\ni1,1.1,0.9,0,0.2,0,x\ni2,0.9,0,0.8,-0.3,0,y\ni3,1.3,0.7,0,0.1,0,x\ni4,1.0,0,0.6,0.4,0,y\n".utf8)
        let (file, bytes) = try Self.both(text) { try BifactorBank.load($0, requirePositiveGeneralSlopes: true) }
        #expect(file == bytes)
        if case .error(let message) = file { Issue.record("the bifactor bank did not read: \(message)") }
        let (fileBank, bytesBank) = try Self.both(text) { try BatteryBank.load($0, quadraturePoints: 15, bound: 6).bank }
        #expect(fileBank == bytesBank)
        if case .error(let message) = fileBank { Issue.record("the battery did not read: \(message)") }
        #expect(BifactorBank.isMultidimensional(.bytes(text, name: "b.csv")))
        #expect(!BifactorBank.isMultidimensional(.bytes(Array("item_id,a,b\n".utf8), name: "b.csv")))
    }
}

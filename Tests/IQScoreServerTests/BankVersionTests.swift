import IQScoreServer
import Testing

@Suite("BankVersion: SHA-256 and the adaptive seed")
struct BankVersionTests {
    @Test("SHA-256 of FIPS 180-4's examples (one block, two blocks) and of the empty input")
    func sha256() {
        #expect(BankVersion.sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            BankVersion.sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(BankVersion.sha256Hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            BankVersion.sha256Hex([UInt8](repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(BankVersion.version(ofBankBytes: Array("abc".utf8)) == "ba7816bf8f01cfea")
    }

    @Test("the seed is 64-bit FNV-1a over session id, a zero byte and the version: fixed values, stable across runs")
    func seed() {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for x in Array("s-1".utf8) + [0] + Array("ba7816bf8f01cfea".utf8) { h = (h ^ UInt64(x)) &* 0x0000_0100_0000_01b3 }
        #expect(BankVersion.catSeed(sessionID: "s-1", bankVersion: "ba7816bf8f01cfea") == h)
        // The same value from an independent implementation (Python: h = ((h ^ b) * 0x100000001b3) % 2**64).
        #expect(BankVersion.catSeed(sessionID: "s-1", bankVersion: "ba7816bf8f01cfea") == 0x4fff_6755_5484_495b)
    }
}

import Foundation
import Psychometrics

/// `path` with its `.csv`, `.jsonl` or `.json` extension replaced by `suffix` (`bank.csv` → `bank.summary.json`),
/// or `suffix` appended when it has none of those: where a run's manifest goes beside its output.
package func siblingPath(of path: String, suffix: String) -> String {
    let name = TemporaryFiles.split(path).name
    for ext in [".csv", ".jsonl", ".json"] where name.hasSuffix(ext) && name.count > ext.count {
        return String(path.dropLast(ext.count)) + suffix
    }
    return path + suffix
}

/// Checks that a bank file is whole before it is served: its last record ends with a line end (a file cut in
/// the middle of a number would otherwise parse, `0.51` read as `0`), and, when the manifest `calibrate` wrote
/// beside it (`BANK.summary.json`) names it, its size and CRC-32 are the manifest's.
package enum BankIntegrity {
    /// The problems of `bytes` (the file's contents as read) as the bank at `path`; empty when it is whole.
    package static func problems(bankPath path: String, bytes: [UInt8]) -> [InputError] {
        var problems: [InputError] = []
        if let last = bytes.last, last != UInt8(ascii: "\n") {
            let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            problems.append(
                InputError(
                    file: path, line: lines,
                    message: "the last record has no line end, so the file may be cut short "
                        + "(a bank written by iqscore calibrate ends with one); if the file is whole, end it with a newline"))
        }
        let manifestPath = siblingPath(of: path, suffix: ".summary.json")
        guard let data = FileManager.default.contents(atPath: manifestPath) else { return problems }
        struct Manifest: Decodable { var outputs: [ManifestEntry]? }
        let name = TemporaryFiles.split(path).name
        guard let manifest = try? JSONDecoder().decode(Manifest.self, from: data),
            let entry = manifest.outputs?.first(where: { $0.role == "bank" && TemporaryFiles.split($0.path).name == name })
        else {
            return problems // not a manifest of this bank (another command's summary): nothing to check against
        }
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update($0) }
        if bytes.count != entry.bytes || crc.hex != entry.crc32 {
            problems.append(
                InputError(
                    file: path,
                    message: "the file has \(bytes.count) bytes with CRC-32 \(crc.hex), but its manifest \(manifestPath) "
                        + "says \(entry.bytes) bytes with CRC-32 \(entry.crc32): it is not the bank calibrate wrote (cut short or changed); "
                        + "write the whole bank again, or remove the manifest if the change is meant"))
        }
        return problems
    }
}

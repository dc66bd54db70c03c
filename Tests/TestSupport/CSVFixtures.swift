import Foundation

/// A fresh temporary directory for one test's fixture files, removed when released.
package final class CSVFixtures {
    package let directory: URL

    package init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("iqscore-csv-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Writes the UTF-8 bytes of `text` exactly (no line-end translation) and returns the file's path.
    package func write(_ name: String, _ text: String) throws -> String {
        try write(name, bytes: Array(text.utf8))
    }

    package func write(_ name: String, bytes: [UInt8]) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }
}

import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#endif

// Shared by every test target that runs the built `iqscore` (the CLI's end-to-end tests, the fuzz targets, the
// server's `serve` tests): where the binary is, how it is launched, and a fresh directory per test.

/// Locating and running the built `iqscore`.
package enum IQScoreCLI {
    /// The `iqscore` binary built beside the test bundle (SwiftPM puts products and the test runner in the same
    /// `.build/<triple>/<configuration>` folder), else `.build/debug/iqscore`.
    package static let executable: URL? = {
        var directories: [URL] = []
        func addWithParents(_ url: URL) {
            // The directory itself, then a few parents (macOS: the bundle's Contents/MacOS folder).
            var dir = url.standardizedFileURL
            for _ in 0..<4 {
                directories.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        let main = Bundle.main.bundleURL
        addWithParents(main.hasDirectoryPath && main.pathExtension != "xctest" ? main : main.deletingLastPathComponent())
        if let argument0 = CommandLine.arguments.first, !argument0.isEmpty {
            addWithParents(URL(fileURLWithPath: argument0).deletingLastPathComponent())
        }
        directories.append(Repository.file(".build/debug"))
        for directory in directories {
            let candidate = directory.appendingPathComponent("iqscore")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        return nil
    }()

    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        package var stderrLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Runs `iqscore arguments…` with `directory` as the working directory; output is captured through files
    /// outside that directory (no pipe can fill up).
    package static func run(_ arguments: [String], in directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> Result {
        let binary = try #require(
            executable,
            "iqscore executable not found next to the test bundle (\(Bundle.main.bundleURL.path), \(CommandLine.arguments.first ?? "?")) nor at \(Repository.root.path)/.build/debug/iqscore; build it with `swift build --build-tests`",
            sourceLocation: sourceLocation)
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-cli-logs-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: logs) }
        let launched = try launch(binary, arguments, in: directory, logs: logs)
        let result = Result(
            status: launched.status, stdout: String(decoding: launched.stdout, as: UTF8.self),
            stderr: String(decoding: launched.stderr, as: UTF8.self))
        #expect(
            launched.exited, "iqscore \(arguments.joined(separator: " ")) was killed by signal \(launched.status)\n\(result.stderr)",
            sourceLocation: sourceLocation)
        return result
    }

    /// What one launch of the binary did.
    package struct Launch {
        /// Ended by exit (not by a signal, nor killed at the time limit).
        package var exited: Bool
        package var status: Int32
        package var timedOut: Bool
        package var stdout: Data
        package var stderr: Data
        package var seconds: Double
    }

    /// Runs `binary arguments…` in `directory`, stdout and stderr through files in `logs` (no pipe can fill up);
    /// killed with SIGKILL after `timeout` seconds.
    package static func launch(
        _ binary: URL, _ arguments: [String], in directory: URL, logs: URL,
        environment: [String: String]? = nil, timeout: Double = .infinity
    ) throws -> Launch {
        let outURL = logs.appendingPathComponent("stdout"), errURL = logs.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        let started = Date()
        try process.run()
        var timedOut = false
        if timeout.isFinite, done.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        try out.close()
        try err.close()
        return Launch(
            exited: process.terminationReason == .exit && !timedOut, status: process.terminationStatus, timedOut: timedOut,
            stdout: try Data(contentsOf: outURL), stderr: try Data(contentsOf: errURL), seconds: seconds)
    }
}

/// A fresh working directory for one test, removed when released.
package final class CLIWorkspace {
    package let directory: URL

    package init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("iqscore-cli-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    package func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Runs iqscore here.
    package func run(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> IQScoreCLI.Result {
        try IQScoreCLI.run(arguments, in: directory, sourceLocation: sourceLocation)
    }

    package func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> IQScoreCLI.Result {
        try IQScoreCLI.run(arguments, in: directory, sourceLocation: sourceLocation)
    }

    package func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: url(name))
    }

    package func read(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: url(name)), as: UTF8.self)
    }

    package func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: url(name).path) }

    /// Names of the files in the workspace (including dot files such as an atomic writer's temporary file).
    package func contents() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    /// A simple CSV (no quoted fields) as rows of fields, header first.
    package func csvRows(_ name: String) throws -> [[String]] {
        try read(name).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    /// A JSON object file.
    package func json(_ name: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: url(name)))
        return try #require(object as? [String: Any], "\(name) is not a JSON object")
    }
}

import Foundation
import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The temporary files this process has open (atomic-output temporaries and spill files), so that they can be
/// removed when the process is interrupted, and stale ones of dead processes removed by the next run.
///
/// Naming: every temporary file sits beside the file it is for and is called `.NAME.tmp-PID` (output
/// temporaries) or `.NAME.spill-PID-K` (spill files), NAME being the output's file name and PID the writing
/// process. `installInterruptCleanup()` makes SIGINT, SIGTERM and SIGHUP remove every registered file and then
/// end the process with status 128 + signal. A process killed with SIGKILL (or crashing) cannot clean up: the
/// next run that writes the same output removes the temporaries whose process no longer runs
/// (`removeStale(besideOutput:)`) and says so on stderr.
package enum TemporaryFiles {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: [Int: String] = [:]
    nonisolated(unsafe) private static var nextToken = 0
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    nonisolated(unsafe) private static var spillCounter = 0

    /// A number for the next spill file's name, unique in this process.
    package static func nextSpillNumber() -> Int {
        lock.lock(); defer { lock.unlock() }
        spillCounter += 1
        return spillCounter
    }

    /// The name prefix for spill files beside `output`: `.NAME.spill-PID-` (a number follows).
    package static func spillPrefix(besideOutput output: String) -> String {
        let (directory, name) = split(output)
        return path(".\(name).spill-\(getpid())-", in: directory)
    }

    /// Registers `path` for removal on interruption; returns a token for `unregister`.
    package static func register(_ path: String) -> Int {
        lock.lock(); defer { lock.unlock() }
        nextToken += 1
        paths[nextToken] = path
        return nextToken
    }

    package static func unregister(_ token: Int) {
        lock.lock(); defer { lock.unlock() }
        paths[token] = nil
    }

    /// Installs the SIGINT/SIGTERM/SIGHUP handlers (once; later calls do nothing). The signals are then
    /// delivered to a dispatch source, not to an asynchronous handler, so the clean-up runs ordinary code.
    package static func installInterruptCleanup() {
        lock.lock(); defer { lock.unlock() }
        guard sources.isEmpty else { return }
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { removeAllAndExit(signal: sig) }
            source.resume()
            sources.append(source)
        }
    }

    private static func removeAllAndExit(signal sig: Int32) {
        lock.lock()
        for path in paths.values { unlink(path) }
        paths.removeAll()
        lock.unlock()
        let message = "iqscore: interrupted (signal \(sig)); temporary files removed, outputs left as they were\n"
        message.withCString { _ = write(2, $0, strlen($0)) }
        _exit(128 + sig)
    }

    /// The directory part and file name of `path` ("." for a bare name).
    package static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    /// The path of `name` in `directory` (as `split` returns them).
    package static func path(_ name: String, in directory: String) -> String {
        (directory == "/" ? "" : directory) + "/" + name
    }

    /// Whether process `pid` is running (or exists but is not ours to signal).
    private static func isRunning(_ pid: Int32) -> Bool {
        if pid <= 0 { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Removes the temporary files left beside `output` by processes that no longer run; returns their paths.
    @discardableResult
    package static func removeStale(besideOutput output: String) -> [String] {
        let (directory, name) = split(output)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for entry in entries where entry.hasPrefix("." + name + ".") {
            let rest = entry.dropFirst(name.count + 2)
            let pidText: Substring
            if rest.hasPrefix("tmp-") {
                pidText = rest.dropFirst(4)
            } else if rest.hasPrefix("spill-") {
                pidText = rest.dropFirst(6).prefix { $0 != "-" }
            } else {
                continue
            }
            guard let pid = Int32(pidText), pid != getpid(), !isRunning(pid) else { continue }
            let stale = path(entry, in: directory)
            if unlink(stale) == 0 { removed.append(stale) }
        }
        return removed
    }
}

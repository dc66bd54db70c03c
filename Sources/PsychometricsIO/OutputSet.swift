import Foundation
import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One output of a run as the manifest lists it: what it is, where, how many data rows (records after a header),
/// its size and CRC-32 (`CRC32`, as zlib computes it).
package struct ManifestEntry: Codable, Sendable, Hashable {
    package var role: String
    package var path: String
    package var rows: Int
    package var bytes: Int
    package var crc32: String
}

/// The outputs of one run, committed as a set, and the checks made before a run reads anything.
///
/// Commit protocol (`commit`): (1) every output's temporary file is flushed and fsynced; (2) the manifest (which
/// names each output with its row count, size and CRC-32) is written to its own temporary file and fsynced;
/// (3) the previous manifest is removed; (4) the outputs are renamed over their targets in the order given;
/// (5) the manifest is renamed into place last; (6) the directories are fsynced. So whenever a manifest exists,
/// the files it names were complete before it appeared; a run interrupted anywhere leaves either the previous
/// set with its manifest (before 3), or no manifest (3–5), or outputs that do not match the manifest's sizes and
/// checksums — which `verify` tells apart from a complete set.
package enum OutputSet {
    /// A file's identity: device and inode of what the path resolves to (through symbolic links), or — for a
    /// path that does not exist yet — its resolved directory and name.
    private enum Identity: Hashable {
        case inode(dev: UInt64, ino: UInt64)
        case pending(String)
    }

    private static func identity(_ path: String) -> (Identity, isCharacterDevice: Bool)? {
        var st = stat()
        if stat(path, &st) == 0 {
            return (.inode(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino)), (st.st_mode & S_IFMT) == S_IFCHR)
        }
        let (directory, name) = TemporaryFiles.split(path)
        guard let resolved = realpath(directory, nil) else { return nil }
        defer { free(resolved) }
        return (.pending(String(cString: resolved) + "/" + name), false)
    }

    /// Refuses, before anything is read or written, an output that is the same file (device and inode, through
    /// links) as any input or as another output, and an output whose directory cannot be written. Character
    /// devices (`/dev/null`) may be named as several outputs.
    /// - Parameters: inputs and outputs as (option or role, path).
    package static func checkPaths(inputs: [(role: String, path: String)], outputs: [(role: String, path: String)]) throws {
        var seen: [Identity: (role: String, path: String)] = [:]
        for input in inputs {
            guard let (id, _) = identity(input.path), case .inode = id else { continue }
            if seen[id] == nil { seen[id] = (input.role, input.path) }
        }
        for output in outputs {
            guard let (id, isDevice) = identity(output.path) else {
                let (directory, _) = TemporaryFiles.split(output.path)
                throw InputError(file: output.path, message: "cannot write \(output.role): the directory '\(directory)' does not exist")
            }
            if let other = seen[id], !isDevice {
                let what = other.role == "input" ? "the input file \(other.path)" : "the \(other.role) file \(other.path)"
                throw InputError(
                    file: output.path, message: "\(output.role) is the same file as \(what); refusing to overwrite it (name another path)")
            }
            seen[id] = (output.role, output.path)
            if case .pending = id {
                let (directory, _) = TemporaryFiles.split(output.path)
                if access(directory, W_OK) != 0 {
                    throw InputError(file: output.path, message: "cannot write \(output.role): the directory '\(directory)' is not writable")
                }
            }
        }
    }

    /// Removes temporary files that killed runs left beside these outputs (`TemporaryFiles.removeStale`);
    /// returns their paths, for the caller to report.
    package static func removeStaleTemporaries(besides outputs: [String]) -> [String] {
        outputs.flatMap { TemporaryFiles.removeStale(besideOutput: $0) }
    }

    /// Commits `outputs` (in this order) and then the manifest, by the protocol above. `manifestText` receives
    /// the entries (role, path, rows, bytes, CRC-32) and returns the manifest document.
    package static func commit(
        _ outputs: [(role: String, writer: AtomicFileWriter, rows: Int)], manifest: AtomicFileWriter?,
        manifestText: ([ManifestEntry]) throws -> String
    ) throws {
        for output in outputs { try output.writer.prepare() }
        let entries = outputs.map {
            ManifestEntry(role: $0.role, path: $0.writer.path, rows: $0.rows, bytes: $0.writer.bytesWritten, crc32: $0.writer.checksum.hex)
        }
        if let manifest {
            try manifest.write(try manifestText(entries))
            try manifest.prepare()
            if manifest.isRegularFile && unlink(manifest.path) != 0 && errno != ENOENT {
                throw InputError(file: manifest.path, message: "cannot remove the previous manifest: \(String(cString: strerror(errno)))")
            }
        }
        for output in outputs { try output.writer.publish() }
        try manifest?.publish()
        var directories = Set(outputs.map { TemporaryFiles.split($0.writer.path).directory })
        if let manifest { directories.insert(TemporaryFiles.split(manifest.path).directory) }
        for directory in directories {
            let fd = open(directory, O_RDONLY)
            if fd >= 0 { fsync(fd); close(fd) }
        }
    }

    /// Checks a manifest against the files it names: each exists with the recorded size and CRC-32. Returns the
    /// problems (empty: the set is complete and consistent).
    package static func verify(manifest path: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return ["\(path): cannot read the manifest"] }
        struct Document: Decodable { var outputs: [ManifestEntry] }
        guard let document = try? JSONDecoder().decode(Document.self, from: data) else {
            return ["\(path): not a manifest (no \"outputs\" list of {role, path, rows, bytes, crc32})"]
        }
        var problems: [String] = []
        for entry in document.outputs {
            guard let checksum = fileChecksum(entry.path) else { problems.append("\(entry.path): missing or unreadable (\(entry.role))"); continue }
            if checksum.bytes != entry.bytes {
                problems.append("\(entry.path): \(checksum.bytes) bytes, the manifest says \(entry.bytes) (\(entry.role))")
            } else if checksum.crc.hex != entry.crc32 {
                problems.append("\(entry.path): CRC-32 \(checksum.crc.hex), the manifest says \(entry.crc32) (\(entry.role))")
            }
        }
        return problems
    }

    /// Size and CRC-32 of a file's contents, or nil when it cannot be read.
    package static func fileChecksum(_ path: String) -> (bytes: Int, crc: CRC32)? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var crc = CRC32(), total = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress!, buffer.count)
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { break }
            crc.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            total += n
        }
        return (total, crc)
    }
}

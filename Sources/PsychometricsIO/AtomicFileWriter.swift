import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a file atomically: bytes go to a temporary file `.NAME.tmp-PID` beside the target (buffered, 1 MiB),
/// and `commit()` flushes, fsyncs and renames it over the target. If the process dies or `commit()` is never
/// called, the target is untouched; the temporary file is removed on `deinit` and on SIGINT/SIGTERM/SIGHUP
/// (`TemporaryFiles`), and one left by a killed process is removed by the next run writing the same target.
/// A target that exists and is not a regular file (`/dev/null`, a FIFO, `/dev/stdout`) is written directly.
///
/// The writer counts the bytes it writes and their CRC-32 (`CRC32`), for the run manifest (`OutputSet`).
/// Several writers that form one result commit as a set with `OutputSet.commit`: `prepare()` (flush, fsync)
/// for every one before the first `publish()` (rename).
package final class AtomicFileWriter {
    package let path: String
    private let temporaryPath: String?
    private var token: Int?
    private var fd: Int32
    private var buffer: [UInt8] = []
    private let capacity = 1 << 20
    private var committed = false
    private var prepared = false
    /// Bytes written so far, and their checksum.
    package private(set) var bytesWritten = 0
    package private(set) var checksum = CRC32()

    /// Whether the target is a regular file (written through a temporary file and a rename).
    package var isRegularFile: Bool { temporaryPath != nil }

    package init(path: String) throws {
        self.path = path
        let (directory, name) = TemporaryFiles.split(path)
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                throw InputError(file: path, message: "is a directory, expected a file to write")
            }
            temporaryPath = nil
            fd = open(path, O_WRONLY)
        } else {
            let temporary = TemporaryFiles.path(".\(name).tmp-\(getpid())", in: directory)
            temporaryPath = temporary
            token = TemporaryFiles.register(temporary)
            fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            if let token { TemporaryFiles.unregister(token) }
            throw InputError(file: path, message: "cannot write: \(reason)")
        }
        buffer.reserveCapacity(capacity)
    }

    deinit {
        if !committed {
            if fd >= 0 { close(fd) }
            if let temporaryPath { unlink(temporaryPath) }
        }
        if let token { TemporaryFiles.unregister(token) }
    }

    package func write(_ string: String) throws {
        var s = string
        try s.withUTF8 { try write(bytes: $0) }
    }

    package func write(bytes: UnsafeBufferPointer<UInt8>) throws {
        checksum.update(UnsafeRawBufferPointer(bytes))
        bytesWritten += bytes.count
        buffer.append(contentsOf: bytes)
        if buffer.count >= capacity { try flush() }
    }

    private func flush() throws {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError(file: path, message: "write failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes out the buffer and returns the temporary file's path (nil when the target is not a regular file), so
    /// that a caller can read back what it wrote before deciding not to commit.
    package func flushedTemporaryPath() throws -> String? {
        try flush()
        return temporaryPath
    }

    /// Discards everything written so far (the temporary file is truncated), so a run can start over.
    package func reset() throws {
        buffer.removeAll(keepingCapacity: true)
        checksum = CRC32()
        bytesWritten = 0
        guard temporaryPath != nil else { return }
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw InputError(file: path, message: "cannot rewind the temporary output: \(String(cString: strerror(errno)))")
        }
    }

    /// First half of a commit: writes out the buffer and fsyncs the temporary file (the data is on disk, the
    /// target not yet replaced).
    package func prepare() throws {
        guard !prepared else { return }
        try flush()
        if temporaryPath != nil && fsync(fd) != 0 {
            throw InputError(file: path, message: "cannot sync the output to disk: \(String(cString: strerror(errno)))")
        }
        prepared = true
    }

    /// Second half of a commit: renames the temporary file over the target (after `prepare()`).
    package func publish() throws {
        try prepare()
        close(fd)
        fd = -1
        if let temporaryPath {
            guard rename(temporaryPath, path) == 0 else {
                throw InputError(file: path, message: "cannot replace file: \(String(cString: strerror(errno)))")
            }
        }
        committed = true
        if let token { TemporaryFiles.unregister(token) }
        token = nil
    }

    /// Flushes, syncs and atomically renames the temporary file to `path` (one file on its own; a set of files
    /// that belong together commits with `OutputSet.commit`).
    package func commit() throws {
        try prepare()
        try publish()
    }
}

@inline(__always) private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file atomically: bytes go to a temporary file beside the target (buffered, 1 MiB), and
/// `commit()` flushes, fsyncs and renames it over the target. If the process dies or `commit()` is never
/// called, the target is untouched and the temporary file is removed on `deinit`.
/// A target that exists and is not a regular file (`/dev/null`, a FIFO, `/dev/stdout`) is written directly.
public final class AtomicFileWriter {
    public let path: String
    private let temporaryPath: String?
    private var fd: Int32
    private var buffer: [UInt8] = []
    private let capacity = 1 << 20
    private var committed = false

    public init(path: String) throws {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                throw InputError(file: path, message: "is a directory, expected a file to write")
            }
            temporaryPath = nil
            fd = open(path, O_WRONLY)
        } else {
            let temporary = (directory.isEmpty ? "" : directory + "/") + ".\(name).tmp-\(getpid())"
            temporaryPath = temporary
            fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        guard fd >= 0 else {
            throw InputError(file: path, message: "cannot write: \(String(cString: strerror(errno)))")
        }
        buffer.reserveCapacity(capacity)
    }

    deinit {
        if !committed {
            if fd >= 0 { close(fd) }
            if let temporaryPath { unlink(temporaryPath) }
        }
    }

    public func write(_ string: String) throws {
        var s = string
        s.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= capacity { try flush() }
    }

    public func write(bytes: UnsafeBufferPointer<UInt8>) throws {
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

    /// Discards everything written so far (the temporary file is truncated), so a run can start over.
    public func reset() throws {
        buffer.removeAll(keepingCapacity: true)
        guard temporaryPath != nil else { return }
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw InputError(file: path, message: "cannot rewind the temporary output: \(String(cString: strerror(errno)))")
        }
    }

    /// Flushes, syncs and atomically renames the temporary file to `path`.
    public func commit() throws {
        try flush()
        guard let temporaryPath else {
            close(fd)
            fd = -1
            committed = true
            return
        }
        fsync(fd)
        close(fd)
        fd = -1
        guard rename(temporaryPath, path) == 0 else {
            throw InputError(file: path, message: "cannot replace file: \(String(cString: strerror(errno)))")
        }
        committed = true
    }
}

/// CSV field quoting (RFC 4180): quotes a field that holds a comma, quote or line break.
public func csvField(_ value: String) -> String {
    if value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
        return "\"" + value.replacingAll("\"", with: "\"\"") + "\""
    }
    return value
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for ch in self { if ch == target { out += replacement } else { out.append(ch) } }
        return out
    }
}

@inline(__always) private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}

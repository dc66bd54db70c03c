import Foundation
import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A temporary binary file for data that does not fit the memory budget (external regrouping, sorted runs):
/// written through a buffer, read back sequentially, removed when released (and on SIGINT/SIGTERM, or by the
/// next run after a SIGKILL: it is named `.NAME.spill-PID-K` beside an output, see `TemporaryFiles`).
package final class SpillFile {
    package let path: String
    private let fd: Int32
    private let token: Int
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// Mutable state behind a pointer: stored `var`s of a class pay a dynamic exclusivity check per access,
    /// which on this per-byte path cost more than the work (as in `CSVReader`).
    private struct State {
        var filled = 0
        var readPosition = 0
        var readEnd = 0
        var bytesWritten = 0
    }
    private let state: UnsafeMutablePointer<State>
    private var filled: Int {
        get { state.pointee.filled }
        set { state.pointee.filled = newValue }
    }
    private var readPosition: Int {
        get { state.pointee.readPosition }
        set { state.pointee.readPosition = newValue }
    }
    private var readEnd: Int {
        get { state.pointee.readEnd }
        set { state.pointee.readEnd = newValue }
    }
    package private(set) var bytesWritten: Int {
        get { state.pointee.bytesWritten }
        set { state.pointee.bytesWritten = newValue }
    }

    /// Creates an empty spill file `prefix` + a number unique in this process; `bufferBytes` of memory each.
    package init(prefix: String, bufferBytes: Int = 1 << 16) throws {
        let path = prefix + String(TemporaryFiles.nextSpillNumber())
        let token = TemporaryFiles.register(path)
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            TemporaryFiles.unregister(token)
            throw InputError(file: path, message: "cannot create a spill file: \(reason)")
        }
        self.path = path
        self.token = token
        self.fd = fd
        capacity = max(bufferBytes, 64)
        buffer = .allocate(capacity: capacity)
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        close(fd)
        unlink(path)
        TemporaryFiles.unregister(token)
        buffer.deallocate()
        state.deallocate()
    }

    // MARK: Writing

    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        if filled + bytes.count > capacity { try flush() }
        if bytes.count > capacity {
            try writeAll(bytes)
        } else if bytes.count > 0 {
            (buffer + filled).update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            filled += bytes.count
        }
        bytesWritten += bytes.count
    }

    @inline(__always) package func write(byte: UInt8) throws {
        if filled == capacity { try flush() }
        buffer[filled] = byte
        filled += 1
        bytesWritten += 1
    }

    /// An unsigned LEB128 varint (7 bits a byte, low first).
    @inline(__always) package func write(varint value: UInt64) throws {
        var v = value
        while v >= 0x80 {
            try write(byte: UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        try write(byte: UInt8(v))
    }

    package func write(word value: UInt64) throws {
        var v = value.littleEndian
        try withUnsafeBytes(of: &v) { try write($0) }
    }

    /// A length-prefixed byte string.
    package func write(string bytes: UnsafeBufferPointer<UInt8>) throws {
        try write(varint: UInt64(bytes.count))
        try write(UnsafeRawBufferPointer(bytes))
    }

    package func write(string: String) throws {
        var s = string
        try s.withUTF8 { try write(string: $0) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError(file: path, message: "cannot write a spill file: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    private func flush() throws {
        try writeAll(UnsafeRawBufferPointer(start: buffer, count: filled))
        filled = 0
    }

    /// Ends writing; reading starts at the beginning.
    package func rewind() throws {
        try flush()
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            throw InputError(file: path, message: "cannot rewind a spill file: \(String(cString: strerror(errno)))")
        }
        readPosition = 0
        readEnd = 0
    }

    /// Empties the file for reuse.
    package func truncate() throws {
        filled = 0
        bytesWritten = 0
        readPosition = 0
        readEnd = 0
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw InputError(file: path, message: "cannot truncate a spill file: \(String(cString: strerror(errno)))")
        }
    }

    // MARK: Reading (after `rewind`)

    /// Whether all bytes have been read.
    package func atEnd() throws -> Bool {
        if readPosition < readEnd { return false }
        try refill()
        return readPosition >= readEnd
    }

    private func refill() throws {
        readPosition = 0
        readEnd = 0
        while true {
            let n = systemRead(fd, buffer, capacity)
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError(file: path, message: "cannot read a spill file: \(String(cString: strerror(errno)))")
            }
            readEnd = n
            return
        }
    }

    @inline(__always) package func readByte() throws -> UInt8 {
        if readPosition >= readEnd {
            try refill()
            guard readEnd > 0 else { throw InputError(file: path, message: "spill file ends early") }
        }
        let b = buffer[readPosition]
        readPosition += 1
        return b
    }

    @inline(__always) package func readVarint() throws -> UInt64 {
        var value: UInt64 = 0, shift: UInt64 = 0
        while true {
            let b = try readByte()
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    package func readWord() throws -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(try readByte()) << (8 * UInt64(k)) }
        return v
    }

    /// Reads `count` bytes into `destination` (replacing its contents).
    package func read(count: Int, into destination: inout [UInt8]) throws {
        destination.removeAll(keepingCapacity: true)
        var left = count
        while left > 0 {
            if readPosition >= readEnd {
                try refill()
                guard readEnd > 0 else { throw InputError(file: path, message: "spill file ends early") }
            }
            let n = min(left, readEnd - readPosition)
            destination.append(contentsOf: UnsafeBufferPointer(start: buffer + readPosition, count: n))
            readPosition += n
            left -= n
        }
    }

    /// A length-prefixed byte string.
    package func readString(into destination: inout [UInt8]) throws {
        try read(count: Int(try readVarint()), into: &destination)
    }
}

@inline(__always) private func systemRead(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int) -> Int { read(fd, p, n) }
@inline(__always) private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }

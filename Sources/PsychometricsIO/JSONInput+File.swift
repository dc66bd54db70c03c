import Foundation
import Psychometrics

extension JSONInput {
    /// Reads `path` and decodes it as `T`; errors name `path`.
    package static func load<T: JSONObjectInput>(_ type: T.Type, path: String) throws -> T {
        try decode(type, from: contents(of: path, description: T.jsonDescription), file: path)
    }

    /// The bytes of `path`, at most `maximumBytes` of them (`readBoundedFile`).
    package static func contents(of path: String, description: String) throws -> Data {
        Data(
            try readBoundedFile(
                path, limit: maximumBytes,
                tooLarge: "the file is larger than 16 MiB; \(description) is a few kilobytes"))
    }
}

/// The bytes of `path`, at most `limit` of them: reading stops once more have arrived, so a huge file or a
/// device such as /dev/zero is an error (`tooLarge`, naming the file), not an unbounded allocation. Errors are
/// `InputError`s naming `path` and the system's reason.
package func readBoundedFile(_ path: String, limit: Int, tooLarge: @autoclosure () -> String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw InputError(file: path, message: "cannot open file: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    var bytes: [UInt8] = []
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw InputError(file: path, message: "read failed: \(String(cString: strerror(errno)))")
        }
        if n == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<n])
        if bytes.count > limit { throw InputError(file: path, message: tooLarge()) }
    }
}

import Foundation
import Psychometrics

extension JSONInput {
    /// Reads `path` and decodes it as `T`; errors name `path`.
    package static func load<T: JSONObjectInput>(_ type: T.Type, path: String) throws -> T {
        try decode(type, from: contents(of: path, description: T.jsonDescription), file: path)
    }

    /// The bytes of `path`, at most `maximumBytes` of them: reading stops there, so a huge file or a device
    /// such as /dev/zero is an error, not an unbounded allocation.
    package static func contents(of path: String, description: String) throws -> Data {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw InputError(file: path, message: "cannot open file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        var data = Data()
        while true {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError(file: path, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { return data }
            data.append(contentsOf: bytes[0..<n])
            if data.count > maximumBytes {
                throw InputError(file: path, message: "the file is larger than 16 MiB; \(description) is a few kilobytes")
            }
        }
    }
}

import Foundation
import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BatchScorer {
    /// The inputs of a run: their names, and the paths to read — a spill-file copy for an input that cannot be
    /// read twice (a pipe, a FIFO, a character device), made before anything is parsed.
    struct InputSources {
        let names: [String]
        let paths: [String]
        let totalBytes: Int?
        /// Keeps the copies alive: they are removed when released, so a caller reads `paths` within
        /// `withExtendedLifetime` of this value.
        private let spools: [SpillFile]

        init(_ inputs: [String], spillPrefix: String) throws {
            var paths: [String] = [], spools: [SpillFile] = [], total = 0
            for input in inputs {
                var st = stat()
                if stat(input, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG {
                    paths.append(input)
                    total += Int(st.st_size)
                    continue
                }
                let fd = open(input, O_RDONLY)
                guard fd >= 0 else { throw InputError(file: input, message: "cannot open file: \(String(cString: strerror(errno)))") }
                defer { close(fd) }
                var fst = stat()
                if fstat(fd, &fst) == 0 && (fst.st_mode & S_IFMT) == S_IFDIR {
                    throw InputError(file: input, message: "is a directory, expected a CSV file")
                }
                let spool = try SpillFile(prefix: spillPrefix, bufferBytes: 1 << 20)
                let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
                defer { block.deallocate() }
                while true {
                    let n = read(fd, block.baseAddress!, block.count)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw InputError(file: input, message: "read failed: \(String(cString: strerror(errno)))")
                    }
                    if n == 0 { break }
                    try spool.write(UnsafeRawBufferPointer(rebasing: block[0..<n]))
                }
                try spool.rewind()
                total += spool.bytesWritten
                paths.append(spool.path)
                spools.append(spool)
            }
            names = inputs
            self.paths = paths
            self.spools = spools
            totalBytes = total
        }
    }
}

import Foundation
import NIOConcurrencyHelpers
import Prometheus

/// The process's own figures under the names Prometheus's client libraries give them (so the dashboards and alerts
/// written for those work unchanged), read from Linux's `/proc/self` and `getrusage(2)` when `GET /metrics` is
/// answered:
///
/// | metric | source |
/// |---|---|
/// | `process_resident_memory_bytes` | `/proc/self/statm` resident pages × page size |
/// | `process_virtual_memory_bytes` | `/proc/self/statm` size × page size |
/// | `process_open_fds` | entries of `/proc/self/fd` |
/// | `process_max_fds` | the soft `RLIMIT_NOFILE` |
/// | `process_cpu_seconds_total` | user + system time of `getrusage(RUSAGE_SELF)` |
/// | `process_start_time_seconds` | `/proc/self/stat` start time (clock ticks after boot) + `btime` of `/proc/stat` |
///
/// A figure the system does not give (another operating system, `/proc` not mounted) is left out, not reported as 0.
final class ProcessGauges: Sendable {
    private let resident: Gauge
    private let virtual: Gauge
    private let openFDs: Gauge
    private let maxFDs: Gauge
    private let cpu: Counter
    /// The CPU seconds already added to `cpu` (a counter only grows by increments).
    private let cpuReported = NIOLockedValueBox<Double>(0)
    private let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        func gauge(_ name: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help))
        }
        resident = gauge("process_resident_memory_bytes", "Resident memory size in bytes.")
        virtual = gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
        openFDs = gauge("process_open_fds", "Number of open file descriptors.")
        maxFDs = gauge("process_max_fds", "Maximum number of open file descriptors (the soft RLIMIT_NOFILE).")
        cpu = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                metricName: "process_cpu_seconds_total", unitName: "",
                helpText: "Total user and system CPU time spent in seconds."))
        if let start = Self.startTime() {
            gauge("process_start_time_seconds", "Start time of the process since the Unix epoch in seconds.").set(start)
        }
    }

    /// Reads every figure again.
    func update() {
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = Self.read("/proc/self/statm")?.split(separator: " "), statm.count >= 2,
            let size = Double(statm[0]), let rss = Double(statm[1])
        {
            virtual.set(size * page)
            resident.set(rss * page)
        }
        if let count = Self.openDescriptors() { openFDs.set(Int64(count)) }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { maxFDs.set(Double(limit.rlim_cur)) }
        var usage = rusage()
        if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 {
            let seconds =
                Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
            cpuReported.withLockedValue { reported in
                if seconds > reported {
                    cpu.increment(by: seconds - reported)
                    reported = seconds
                }
            }
        }
    }

    /// The entries of `/proc/self/fd` (less the one this count opens).
    static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return max(0, count - 1)
    }

    /// Boot time plus the process's start in clock ticks after boot.
    static func startTime() -> Double? {
        guard let stat = read("/proc/self/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces): state is field 3, starttime field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        guard let boot = read("/proc/stat")?.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let btime = Double(boot.dropFirst(6).trimmingCharacters(in: .whitespaces))
        else { return nil }
        return btime + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `/proc` file's text (they report size 0, so it is read to its end), at most 64 KiB.
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        return String(decoding: bytes[..<filled], as: UTF8.self)
    }
}

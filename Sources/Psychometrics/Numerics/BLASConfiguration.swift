import CLapack

/// Process-wide OpenBLAS settings, for the program that owns the process (an executable or a server's
/// start-up code); nothing in the libraries calls it. With the default
/// `CalibrationOptions.denseProductThreading` (`.personBlocks`) the calibrator runs its own person-block
/// workers and expects single-threaded BLAS calls: call `setThreadCount(1)` once at start-up or set
/// `OPENBLAS_NUM_THREADS=1`. That is also faster on the E-step's tall-thin products and keeps concurrent
/// calibrations from competing for BLAS threads.
package enum BLASConfiguration {
    package static func setThreadCount(_ count: Int) {
        openblas_set_num_threads(Int32(max(1, count)))
    }

    package static var threadCount: Int { BLAS.threadCount }

    /// OpenBLAS's build description (e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64").
    package static var buildDescription: String { String(cString: openblas_get_config()) }
}

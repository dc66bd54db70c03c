/// Rows of doubles padded to whole 64-byte cache lines in one 64-byte-aligned, zeroed allocation: a row's vector
/// loads and stores then never straddle two lines (61 quadrature nodes → rows of 64 doubles). The sparse E-step
/// keeps its tables and count rows this way, and `RowTrafficReference` measures the same layout. The owner
/// calls `deallocate()`.
package struct AlignedRows: @unchecked Sendable {
    /// Doubles from one row's start to the next: the row length rounded up to a multiple of 8.
    package let stride: Int
    package let base: UnsafeMutablePointer<Double>

    package init(rows: Int, length: Int) {
        stride = (length + 7) / 8 * 8
        base = UnsafeMutableRawPointer.allocate(byteCount: max(1, rows * stride) * 8, alignment: 64)
            .bindMemory(to: Double.self, capacity: max(1, rows * stride))
        base.initialize(repeating: 0, count: max(1, rows * stride))
    }

    /// Row r's first double.
    @inline(__always) package func row(_ r: Int) -> UnsafeMutablePointer<Double> { base + r * stride }

    package func deallocate() { base.deallocate() }
}

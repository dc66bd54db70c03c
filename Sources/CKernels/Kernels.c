#include "CKernels.h"
#include <math.h>
#include <string.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

// The same operations in every version: no a·b + c fused into one rounding.
#pragma STDC FP_CONTRACT OFF

#if defined(__x86_64__) && defined(__linux__) && defined(__clang__)
// Baseline SSE2, AVX2 (4 doubles) and AVX-512 (8 doubles); the loader picks one per process.
#define IQSCORE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define IQSCORE_CLONES
#endif

/// Answers ahead whose rows are prefetched: a row sits at an item-dependent address that the hardware cannot
/// predict (2, 4 and 8 measured the same on W2; 8 a little slower).
#define IQSCORE_AHEAD 2

/// The row of answer k: (rowStart[items[k]] + responses[k]) · stride, one row per (item, category).
static inline __attribute__((always_inline)) const double *table_row(const double *table, const int32_t *rowStart, const int32_t *items,
                                       const uint8_t *responses, long k, long stride) {
    return table + ((long)rowStart[items[k]] + (long)responses[k]) * stride;
}

static inline __attribute__((always_inline)) double exp_core(double x) {
    const double magic = 6755399441055744.0;   // 1.5 · 2^52
    double xc = x < -708.0 ? -708.0 : (x > 709.0 ? 709.0 : x);
    double t = xc * 1.4426950408889634 + magic;   // k + magic, k = round(x / ln2)
    double k = t - magic;
    double r = (xc - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
    double p = 1.0 / 6227020800.0;   // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // 2^k: k sits in the low bits of t's significand; (k + 1023) << 52 is the double 2^k.
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    uint64_t scaleBits = (bits - 0x4338000000000000ULL + 1023ULL) << 52;
    double scale;
    memcpy(&scale, &scaleBits, sizeof scale);
    return x < -708.0 ? 0.0 : p * scale;
}

/// The largest of v[0 ..< count], over eight running maxima (a maximum does not depend on the order of the
/// comparisons, and eight independent chains vectorise where one serial chain of compares would not).
static inline __attribute__((always_inline)) double maximum(const double *restrict v, long count) {
    double m[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    long whole = count - count % 8;
    for (long t = 0; t < whole; t += 8)
        for (int l = 0; l < 8; l++) m[l] = v[t + l] > m[l] ? v[t + l] : m[l];
    for (long t = whole; t < count; t++) m[0] = v[t] > m[0] ? v[t] : m[0];
    double largest = m[0];
    for (int l = 1; l < 8; l++) largest = m[l] > largest ? m[l] : largest;
    return largest;
}

/// Σ v[0 ..< count] over four running sums by t mod 4, added as ((s0 + s1) + s2) + s3, then the last count mod 4
/// values in order: the same additions in the same order on every instruction set.
static inline __attribute__((always_inline)) double lane_sum(const double *restrict v, long count) {
    long whole = count - count % 4;
    double s[4] = {0, 0, 0, 0};
    for (long t = 0; t < whole; t += 4)
        for (int l = 0; l < 4; l++) s[l] += v[t + l];
    double sum = ((s[0] + s[1]) + s[2]) + s[3];
    for (long t = whole; t < count; t++) sum += v[t];
    return sum;
}

static inline __attribute__((always_inline)) double normalize(double *restrict v, long count, long *first, long *last) {
    double m = maximum(v, count);
    // The exponentials elementwise (full vector width) over the nodes within e^-40 of the largest, 0 beyond them
    // (e^-40 < 2^-50: below the support's floor, and below the sum's rounding unit), then four running sums over
    // t mod 4 in t order.
    // The range is widened to whole groups of 8 so that the loop runs at vector width without a scalar tail;
    // one iteration per group (interleaving groups would leave ranges of under 32 nodes to the scalar tail).
    const double cut = m - 40.0;
    long lo = 0, hi = count;
    while (lo < hi && v[lo] < cut) lo++;
    while (hi > lo && v[hi - 1] < cut) hi--;
    lo -= lo % 8;
    hi = hi + 7 - (hi + 7) % 8 < count ? hi + 7 - (hi + 7) % 8 : count;
    for (long t = 0; t < lo; t++) v[t] = 0.0;
    for (long t = hi; t < count; t++) v[t] = 0.0;
#pragma clang loop interleave_count(1)
    for (long t = lo; t < hi; t++) v[t] = exp_core(v[t] - m);
    // The zeros outside [lo, hi) add nothing, and lo is a multiple of 4: the sum over [lo, hi) by lanes t mod 4
    // is the sum over all nodes, bit for bit.
    double sum = lane_sum(v + lo, hi - lo);
    double inverse = 1 / sum;
    for (long t = lo; t < hi; t++) v[t] *= inverse;
    // The support: from the first to the last weight at least 2⁻⁵⁰ of the largest. The largest is `inverse`:
    // exp(0) = 1 exactly at the maximum and every other e_t ≤ 1, so the largest weight is 1 · (1/S).
    double floor = inverse * 0x1p-50;
    long t0 = lo, t1 = hi;
    while (v[t0] < floor) t0++;
    while (v[t1 - 1] < floor) t1--;
    *first = t0;
    *last = t1;
    return m + log(sum);
}

IQSCORE_CLONES
double iqscore_specific_products(double *restrict acc, double *restrict rowSums, const double *restrict prior,
                                 const int32_t *restrict items, const uint8_t *restrict responses, long count,
                                 const int32_t *restrict rowStart, const double *restrict table, long q, long stride) {
    const long nodes = q * q;
#if defined(__x86_64__)
    const unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040);   // FTZ (bit 15) and DAZ (bit 6)
#endif
    for (long t = 0; t < nodes; t++) acc[t] = prior[t];
    for (long k = 0; k < count; k++) {
        if (k + IQSCORE_AHEAD < count) iqscore_prefetch_row(table_row(table, rowStart, items, responses, k + IQSCORE_AHEAD, stride), 0, nodes);
        const double *restrict row = table_row(table, rowStart, items, responses, k, stride);
        for (long t = 0; t < nodes; t++) acc[t] *= row[t];
    }
    double largest = 0;
    for (long a = 0; a < q; a++) {
        double sum = lane_sum(acc + a * q, q);
        rowSums[a] = sum;
        largest = sum > largest ? sum : largest;
    }
#if defined(__x86_64__)
    _mm_setcsr(csr);
#endif
    return largest;
}

IQSCORE_CLONES
void iqscore_exp_shifted(double *restrict v, long count, double shift) {
    for (long t = 0; t < count; t++) v[t] = exp_core(v[t] - shift);
}

IQSCORE_CLONES
double iqscore_normalize_log_posterior(double *restrict v, long count, long *first, long *last) {
    return normalize(v, count, first, last);
}

IQSCORE_CLONES
void iqscore_log_posterior(double *restrict acc, const double *restrict prior, const int32_t *restrict items,
                           const uint8_t *restrict responses, long count, const int32_t *restrict rowStart,
                           const double *restrict table, long nodes, long stride) {
    for (long t = 0; t < nodes; t++) acc[t] = prior[t];
    for (long k = 0; k < count; k++) {
        if (k + IQSCORE_AHEAD < count) iqscore_prefetch_row(table_row(table, rowStart, items, responses, k + IQSCORE_AHEAD, stride), 0, nodes);
        const double *restrict row = table_row(table, rowStart, items, responses, k, stride);
        for (long t = 0; t < nodes; t++) acc[t] += row[t];
    }
}

IQSCORE_CLONES
void iqscore_add_posterior(const double *restrict w, long first, long last, const int32_t *restrict items,
                           const uint8_t *restrict responses, long count, const int32_t *restrict rowStart, double *counts,
                           long stride) {
    for (long k = 0; k < count; k++) {
        if (k + IQSCORE_AHEAD < count) iqscore_prefetch_row(table_row(counts, rowStart, items, responses, k + IQSCORE_AHEAD, stride), first, last);
        double *restrict row = (double *)table_row(counts, rowStart, items, responses, k, stride);
        for (long t = first; t < last; t++) row[t] += w[t];
    }
}

/// Blocks of 8 columns y of C's row x, `blocks` (1–4, a constant where inlined) at a time from column `first`:
/// acc[b][l] = Σ_t gT[t][x] · gT[t][first + 8b + l], over t in order; the entries y ≥ x are stored to `row`.
static inline __attribute__((always_inline)) void gram_row_group(int blocks, long x, long first, long m, long w,
                                                                  const double *restrict gT, long ld, double *restrict row) {
    double acc[4][8] = {{0}};
    for (long t = 0; t < w; t++) {
        const double *restrict column = gT + t * ld;
        double v = column[x];
        for (int b = 0; b < blocks; b++)
            for (int l = 0; l < 8; l++) acc[b][l] += v * column[first + 8 * b + l];
    }
    for (int b = 0; b < blocks; b++)
        for (int l = 0; l < 8; l++) {
            long y = first + 8 * b + l;
            if (y >= x && y < m) row[y] = acc[b][l];
        }
}

IQSCORE_CLONES
void iqscore_gram_upper_packed(long m, long w, const double *restrict g, long ldg, double *restrict scratch,
                               double *restrict packed) {
    long ld = iqscore_gram_scratch_stride(m);
    for (long t = 0; t < w; t++) {
        double *restrict column = scratch + t * ld;
        for (long x = 0; x < m; x++) column[x] = g[x * ldg + t];
        for (long x = m; x < ld; x++) column[x] = 0;
    }
    for (long x = 0; x < m; x++) {
        double *row = packed + x * m - x * (x + 1) / 2;
        for (long first = x & ~7L; first < m; first += 32) {
            long blocks = (m - first + 7) / 8;
            switch (blocks) {
            case 1: gram_row_group(1, x, first, m, w, scratch, ld, row); break;
            case 2: gram_row_group(2, x, first, m, w, scratch, ld, row); break;
            case 3: gram_row_group(3, x, first, m, w, scratch, ld, row); break;
            default: gram_row_group(4, x, first, m, w, scratch, ld, row); break;
            }
        }
    }
}

IQSCORE_CLONES
void iqscore_score_rows(double *restrict g, long m, long width, const double *restrict root, long terms,
                        const int64_t *restrict row, const int64_t *restrict probOffset, const int64_t *restrict hOffset,
                        const double *restrict u, const double *restrict prob, const double *restrict h) {
    memset(g, 0, (size_t)(m * width) * sizeof(double));
    for (long k = 0; k < terms; k++) {
        double *restrict out = g + row[k] * width;
        const double *restrict pk = prob + probOffset[k], *restrict hk = h + hOffset[k];
        double uk = u[k];
        for (long t = 0; t < width; t++) out[t] += (uk - pk[t]) * hk[t] * root[t];
    }
}

IQSCORE_CLONES
void iqscore_centre_rows(double *restrict g, long m, long width, const double *restrict root) {
    long whole = width - width % 8;
    for (long x = 0; x < m; x++) {
        double *restrict gx = g + x * width;
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (long t = 0; t < whole; t += 8)
            for (int l = 0; l < 8; l++) acc[l] += gx[t + l] * root[t + l];
        double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (long t = whole; t < width; t++) sum += gx[t] * root[t];
        for (long t = 0; t < width; t++) gx[t] -= sum * root[t];
    }
}

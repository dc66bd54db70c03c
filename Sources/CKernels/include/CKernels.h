#ifndef IQSCORE_CKERNELS_H
#define IQSCORE_CKERNELS_H
// The calibrator's innermost loops, in C so that one source is compiled for several instruction sets and the
// best one for the running CPU is chosen when the library loads (GCC/Clang `target_clones`, an ifunc on
// x86-64 Linux): Swift code is compiled for the x86-64 baseline (SSE2, two doubles per instruction), and these
// loops run out of registers and L1/L2 on every answer of every E-step. Elsewhere one plain version is built.
//
// Every kernel does the same IEEE additions in the same order whichever version runs (no fused multiply-add, no
// reassociation), so results are the same to the bit on every CPU.
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Read-prefetch hints for doubles [first, last) of a row, one per 64-byte line (GCC/Clang builtin): for rows at
/// addresses the hardware cannot predict but the caller knows a few rows ahead (the E-step's table and count
/// rows, the standard errors' gathered rows). Inline here so that Swift callers inline it too.
static inline __attribute__((always_inline)) void iqscore_prefetch_row(const double *row, long first, long last) {
    for (long t = first; t < last; t += 8) __builtin_prefetch(row + t, 0, 3);
}

/// A person's log-posterior on `nodes` quadrature nodes: acc[t] = prior[t] + Σ_k row_k[t], over the answers
/// k = 0 ..< count in order, row_k = table + (rowStart[items[k]] + responses[k]) · stride: one row per (item,
/// category), item j's category u at row rowStart[j] + u (`LogCategoryTable`; stride ≥ nodes: a stride of whole
/// cache lines keeps each row's vector loads within lines). The row two answers ahead is prefetched (rows sit at
/// item-dependent addresses the hardware cannot predict).
void iqscore_log_posterior(double *acc, const double *prior, const int32_t *items, const uint8_t *responses,
                           long count, const int32_t *rowStart, const double *table, long nodes, long stride);

/// Adds a person's posterior weights w[t], t in [first, last), into one count row per answer: the row
/// counts + (rowStart[items[k]] + responses[k]) · stride (the expected count of each item's category), for
/// k = 0 ..< count in order; the row two answers ahead is prefetched.
void iqscore_add_posterior(const double *w, long first, long last, const int32_t *items, const uint8_t *responses,
                           long count, const int32_t *rowStart, double *counts, long stride);

/// One person's block of one specific factor of a bifactor model, in probability space (no exponentials):
/// acc[a·q + t] = prior[a·q + t] · Π_k row_k[a·q + t] over the answers k = 0 ..< count in order (rows of a table of
/// probabilities P(u | θ_g,a, θ_s,t), laid out as `iqscore_log_posterior`'s), then rowSums[a] = Σ_t acc[a·q + t]
/// (four running sums over t mod 4, added in lane order, then the tail in order) for a in 0 ..< q; returns the
/// largest row sum. Runs with flush-to-zero and denormals-are-zero set (restored on return): a product that falls
/// below 2⁻¹⁰²² becomes 0 instead of crawling through denormals, so the caller must check the returned largest
/// row sum is far above that (the bifactor E-step redoes a block below 2⁻⁷⁰⁰ in logs).
double iqscore_specific_products(double *acc, double *rowSums, const double *prior, const int32_t *items, const uint8_t *responses,
                                 long count, const int32_t *rowStart, const double *table, long q, long stride);

/// v[t] = exp(v[t] − shift) for t in 0 ..< count, in place (the EAP and posterior weights).
///
/// Method (Cody & Waite 1980; as in fdlibm and Cephes): x = k·ln2 + r with k = round(x/ln2) and |r| ≤ ln2/2, ln2
/// split into a high part exact in k·ln2_hi and a low part; exp(r) by its Taylor polynomial of degree 13
/// (truncation error below 1e-17 relative), and 2^k built in the exponent bits. Rounding uses the 1.5·2^52 trick
/// and no fused multiply-add, so every instruction set gives the same bits. Accuracy: within 4.5e-16 relative of
/// libm's `exp` on [−708, 709] (tested); exp(x) = 0 for x < −708 (the smallest normal is e^−708.4, and −∞ gives
/// 0), x > 709 is taken as 709. NaN inputs are not expected.
void iqscore_exp_shifted(double *v, long count, double shift);

/// Turns a log-posterior (log L(θ_t) + log π_t, t in 0 ..< count) in place into normalised weights and returns
/// log Σ_t exp(v[t]) (the person's marginal log-likelihood): m = max v, e_t = exp(v_t − m) as
/// `iqscore_exp_shifted`, S = Σ e_t (four running sums over t mod 4, added in lane order, then the tail in
/// order), w_t = e_t · (1/S); returns m + log S. The posterior's support goes to [*first, *last): the nodes from
/// the first to the last whose weight is at least 2⁻⁵⁰ of the largest (a smaller weight's terms are below the
/// rounding unit of the largest one's).
double iqscore_normalize_log_posterior(double *v, long count, long *first, long *last);

/// A person's score rows for the standard errors, `width` nodes each: g (m rows, row-major, zeroed here) gets, for
/// each term k in order, g[row[k]][t] += (u[k] − P_k[t]) · h_k[t] · root[t] for t in 0 ..< width, with
/// P_k = prob + probOffset[k] and h_k = h + hOffset[k] (an item's probabilities and one parameter's h = ∇P/(PQ)
/// over the nodes, and root the posterior weights' square roots, all from the support's first node).
void iqscore_score_rows(double *g, long m, long width, const double *root, long terms, const int64_t *row,
                        const int64_t *probOffset, const int64_t *hOffset, const double *u, const double *prob,
                        const double *h);

/// Centres a person's score rows (m rows of `width`, row-major) in place: with s_x = Σ_t g[x][t] · root[t],
/// g[x][t] −= s_x · root[t]. Each sum runs over eight running sums by t mod 8, added as
/// ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the last width mod 8 nodes in order.
void iqscore_centre_rows(double *g, long m, long width, const double *root);

/// Columns of `iqscore_gram_upper_packed`'s scratch per node for m rows: m rounded up to 8, plus 24, so that a group
/// of four 8-wide column blocks starting at any block below m stays inside the row.
static inline __attribute__((always_inline)) long iqscore_gram_scratch_stride(long m) { return ((m + 7) & ~7L) + 24; }

/// The upper triangle of C = G Gᵀ for G of m rows and w columns (row-major, row stride ldg), written packed by rows:
/// C[x][y], y ≥ x, at packed[x·m − x(x + 1)/2 + y] (m(m + 1)/2 doubles in all). `scratch` holds
/// w · iqscore_gram_scratch_stride(m) doubles.
///
/// Method: G is copied by columns into `scratch` (node t's column contiguous, zero-padded), and row x of C is
/// accumulated over the nodes in order as C[x][y] += G[x][t] · G[y][t] for 8-wide blocks of y from x's block on,
/// up to four blocks at a time held in registers: vectors along y, so no horizontal sums, and every entry is the
/// same sum in node order on every instruction set. (OpenBLAS `dsyrk` on the standard errors' 50 × 38 person
/// blocks ran at about a third of its `dgemm` speed.)
void iqscore_gram_upper_packed(long m, long w, const double *g, long ldg, double *scratch, double *packed);

#ifdef __cplusplus
}
#endif
#endif

#ifndef IQSCORE_CLAPACK_SHIM_H
#define IQSCORE_CLAPACK_SHIM_H
// CBLAS from OpenBLAS (cblas.h also declares openblas_set_num_threads & co.) and LAPACKE from netlib.
#include <cblas.h>
#include <lapacke.h>

// A read prefetch hint (GCC/Clang builtin): the calibrator's information-matrix pass gathers rows from a
// buffer too large for the caches, in an order known a few rows ahead.
static inline void iqscore_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif

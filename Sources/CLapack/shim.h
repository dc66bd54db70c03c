#ifndef IQSCORE_CLAPACK_SHIM_H
#define IQSCORE_CLAPACK_SHIM_H
// CBLAS from OpenBLAS (cblas.h also declares openblas_set_num_threads & co.) and LAPACKE from netlib.
#include <cblas.h>
#include <lapacke.h>
#endif

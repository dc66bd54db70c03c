#include "CKernels.h"
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
// The CKernels built for one instruction set on seeded inputs: a hash of every output bit.
int main(void) {
    srand(7);
    long nodes = 61, stride = 64, J = 300, cells = 25;   // rows padded to whole lines, as the E-step keeps them
    // One row per (item, category): item j's categories at rows rowStart[j] + u (two per item here, as 0/1 items;
    // the E-step's `LogCategoryTable` layout), and one count row per (item, category).
    double *table = malloc(2*J*stride*8), prior[61], acc[61];
    static double counts[2*300*64];
    int32_t rowStart[301];
    for (long j = 0; j <= J; j++) rowStart[j] = (int32_t)(2*j);
    for (long i = 0; i < 2*J*stride; i++) table[i] = -(double)rand()/RAND_MAX*5;
    for (int t = 0; t < 61; t++) prior[t] = -0.5*((t-30)/5.0)*((t-30)/5.0);
    uint64_t h = 1469598103934665603ULL; double ll = 0;
    for (int p = 0; p < 20000; p++) {
        int32_t items[25]; uint8_t resp[25];
        for (int k = 0; k < cells; k++) { items[k] = (k*12 + rand()%12); resp[k] = rand()&1; }
        iqscore_log_posterior(acc, prior, items, resp, cells, rowStart, table, nodes, stride);
        long f, l; ll += iqscore_normalize_log_posterior(acc, nodes, &f, &l);
        iqscore_add_posterior(acc, f, l, items, resp, cells, rowStart, counts, stride);
        double x[13]; for (int i = 0; i < 13; i++) x[i] = -(double)rand()/RAND_MAX*700 + 5;
        iqscore_exp_shifted(x, 13, 1.5);
        for (int i = 0; i < 13; i++) { uint64_t b; memcpy(&b, &x[i], 8); h = (h ^ b) * 1099511628211ULL; }
    }
    // Gram products of persons' score blocks: m rows (1 to 60, so every group of column blocks and tail occurs),
    // w columns (the posterior's support), rows strided as the standard errors keep them.
    static double g[60*61], scratch[61*(64+24)], packed[60*61/2];
    for (int p = 0; p < 2000; p++) {
        long m = 1 + p % 60, w = 1 + rand() % 61;
        for (long i = 0; i < m*w; i++) g[i] = (double)rand()/RAND_MAX - 0.5;
        iqscore_gram_upper_packed(m, w, g, w, scratch, packed);
        for (long i = 0; i < m*(m+1)/2; i++) { uint64_t b; memcpy(&b, &packed[i], 8); h = (h ^ b) * 1099511628211ULL; }
    }
    // A person's score rows and their centring: m rows from terms at random rows (shared rows too), w nodes.
    static double prob[300*61], hrow[300*3*61], root[61], u[150];
    static int64_t row[150], po[150], ho[150];
    for (long i = 0; i < 300*61; i++) prob[i] = (double)rand()/RAND_MAX;
    for (long i = 0; i < 300*3*61; i++) hrow[i] = (double)rand()/RAND_MAX*4 - 2;
    for (int p = 0; p < 2000; p++) {
        long m = 1 + p % 60, w = 1 + rand() % 61, terms = m + rand() % (m + 1), t0 = rand() % (62 - w);
        for (long t = 0; t < w; t++) root[t] = (double)rand()/RAND_MAX;
        for (long k = 0; k < terms; k++) {
            long j = rand() % 300;
            row[k] = rand() % m; po[k] = j*61 + t0; ho[k] = (j*3 + rand() % 3)*61 + t0; u[k] = rand() & 1;
        }
        iqscore_score_rows(g, m, w, root, terms, row, po, ho, u, prob, hrow);
        iqscore_centre_rows(g, m, w, root);
        for (long i = 0; i < m*w; i++) { uint64_t b; memcpy(&b, &g[i], 8); h = (h ^ b) * 1099511628211ULL; }
    }
    for (long i = 0; i < 2*J*stride; i++) { uint64_t b; memcpy(&b, &counts[i], 8); h = (h ^ b) * 1099511628211ULL; }
    uint64_t b; memcpy(&b, &ll, 8);
    printf("%016llx %016llx\n", (unsigned long long)h, (unsigned long long)b);
}

#!/usr/bin/env bash
# The bifactor workload of issue 28: dense 0/1 responses of PERSONS sessions to SPECIFICS x PER_FACTOR 2PL items
# (default 100,000 x 6 x 10 = 60 items), each item on the general factor and one specific factor, fitted by
# `iqscore calibrate --model bifactor --no-se` (fit time from its summary: EM only, the file read excluded) and by
# mirt 1.47 `bfactor(d, specific, SE = FALSE)` (timed around the call), both at their defaults: 31 quadrature
# points per dimension on [-6, 6], TOL 1e-4 (the largest parameter change in a cycle). Thread for thread:
# iqscore --threads 1 against mirt single-threaded, iqscore --threads 2 against mirt with mirtCluster(2); the
# log-likelihoods are printed beside the times (the comparison is at equal log-likelihood). SKIP_MIRT=1 times
# iqscore only (the scaling study: 6, 12 and 24 specifics). Needs mirt 1.47 as ../shared/NOTES.md says
# (R_LIBS=/work/Rlib); THREADS="1" runs one thread count only (default "1 2"); the data are drawn in R (set.seed(2026): a_g ~ U(1, 2), a_s ~ U(0.5, 1.5), d ~ N(0, 1)).
# TWO_GROUPS=1: two groups instead (issue 29), the first half of the sessions group A (the reference, N(0, 1)), the
# second half group B with a general factor N(-0.5, 1.2^2); iqscore `--group-column group --reference A` (B's
# general and specific factors' means and SDs estimated), mirt `bfactor(..., group =, invariance = c(<items>,
# "free_means", "free_var"))`, the same model.
#   bash Benchmarks/bifactor.sh [PERSONS SPECIFICS PER_FACTOR]
set -euo pipefail
persons=${1:-100000}; specifics=${2:-6}; per=${3:-10}
source "$(dirname "$0")/lib.sh"
groups=${TWO_GROUPS:-0}
tag=bifactor_${persons}_${specifics}x${per}$([ "$groups" = 1 ] && echo _groups || true)
data=$out/$tag.csv; items=$out/${tag}_items.csv
if [ ! -s "$data" ]; then
    Rscript - "$persons" "$specifics" "$per" "$data" "$items" "$groups" <<'R'
args <- commandArgs(trailingOnly = TRUE)
two <- args[6] == "1"
n <- as.integer(args[1]); s <- as.integer(args[2]); per <- as.integer(args[3]); J <- s * per
set.seed(2026)
ag <- runif(J, 1, 2); as <- runif(J, 0.5, 1.5); d <- rnorm(J)
spec <- rep(seq_len(s), each = per)
g <- rnorm(n); th <- matrix(rnorm(n * s), n, s)
group <- rep(c("A", "B"), c(n - n %/% 2, n %/% 2))
if (two) g[group == "B"] <- -0.5 + 1.2 * g[group == "B"]
z <- outer(g, ag) + th[, spec] * rep(as, each = n) + rep(d, each = n)
x <- matrix(as.integer(runif(n * J) < plogis(z)), n, J)
colnames(x) <- sprintf("i%03d", seq_len(J))
if (two) x <- data.frame(group = group, x)
write.csv(x, args[4], row.names = FALSE, quote = FALSE)
write.csv(data.frame(item_id = sprintf("i%03d", seq_len(J)), domain = sprintf("f%02d", spec)), args[5], row.names = FALSE)
R
fi
for t in ${THREADS:-1 2}; do
    grouping=(); [ "$groups" = 1 ] && grouping=(--group-column group --reference A)
    "$bin" calibrate "$data" --model bifactor --items "$items" "${grouping[@]}" --no-se --threads "$t" --out "$out/${tag}_bank_$t.csv" \
        --summary-json "$out/${tag}_iqscore_$t.json" 2>/dev/null || [ $? -eq 3 ]
    if [ "${SKIP_MIRT:-0}" = 1 ]; then
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f'threads {sys.argv[2]}: iqscore {r[\"fit_seconds\"]:.2f} s ({r[\"cycles\"]} cycles, {r[\"e_steps\"]} E-steps, logLik {r[\"log_likelihood\"]:.4f}, converged {r[\"converged\"]})')" \
            "$out/${tag}_iqscore_$t.json" "$t"
        continue
    fi
    Rscript - "$data" "$items" "$t" "$rlib" "$groups" > "$out/${tag}_mirt_$t.json" 2>/dev/null <<'R'
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(mirt, lib.loc = args[4]))
d <- read.csv(args[1]); spec <- as.integer(factor(read.csv(args[2])$domain)); threads <- as.integer(args[3])
if (threads > 1) suppressMessages(mirtCluster(threads))
if (args[5] == "1") {
    group <- d$group; d <- d[, -1]
    t0 <- proc.time()
    m <- bfactor(d, spec, group = group, invariance = c(colnames(d), "free_means", "free_var"), SE = FALSE, verbose = FALSE)
} else {
t0 <- proc.time()
m <- bfactor(d, spec, SE = FALSE, verbose = FALSE)
}
s <- (proc.time() - t0)[["elapsed"]]
cat(sprintf('{"threads": %d, "seconds": %.3f, "cycles": %d, "log_likelihood": %.6f, "converged": %s}\n', threads, s,
            extract.mirt(m, "iterations"), logLik(m), tolower(extract.mirt(m, "converged"))))
R
    python3 - "$out/${tag}_iqscore_$t.json" "$out/${tag}_mirt_$t.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1])); mirt = json.loads(open(sys.argv[2]).read())
print(f'threads {mirt["threads"]}: iqscore {ours["fit_seconds"]:.2f} s ({ours["cycles"]} cycles, logLik {ours["log_likelihood"]:.4f}, converged {ours["converged"]}) | '
      f'mirt {mirt["seconds"]:.2f} s ({mirt["cycles"]} cycles, logLik {mirt["log_likelihood"]:.4f}, converged {mirt["converged"]}) | '
      f'ratio {mirt["seconds"] / ours["fit_seconds"]:.1f}x, logLik difference {ours["log_likelihood"] - mirt["log_likelihood"]:+.4f}')
PY
done

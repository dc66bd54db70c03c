#!/usr/bin/env bash
# The polytomous calibration workload of issue 27: a graded bank, PERSONS x ITEMS x CATEGORIES (default
# 100,000 x 50 x 5), fitted by iqscore (`graded-calibration fit`, fit only, no standard errors) and by mirt 1.47
# (`mirt(d, 1, "graded", SE = FALSE)`, default TOL 1e-4 for both), thread for thread: iqscore --threads 1 against
# mirt single-threaded, iqscore --threads 2 against mirt with mirtCluster(2). Median of RUNS runs (default 3;
# mirt 1 run). Needs mirt 1.47 built as ../shared/NOTES.md says (R_LIBS=/work/Rlib).
#   bash Benchmarks/graded.sh [PERSONS ITEMS CATEGORIES]
set -euo pipefail
cd "$(dirname "$0")/.."
persons=${1:-100000}; items=${2:-50}; categories=${3:-5}; runs=${RUNS:-3}
out=bench-out; mkdir -p "$out"
swift build -c release --product graded-calibration 2>&1 | tail -1
bin=.build/release/graded-calibration
data=$out/graded_${persons}_${items}_${categories}.csv
[ -s "$data" ] || "$bin" simulate --persons "$persons" --items "$items" --categories "$categories" --seed 2026 --out "$data"
rlib=${R_LIBS:-/work/Rlib}
for t in 1 2; do
    for r in $(seq "$runs"); do "$bin" fit "$data" --threads "$t" --no-se; done > "$out/graded_iqscore_$t.jsonl"
    Rscript - "$data" "$t" "$rlib" > "$out/graded_mirt_$t.json" 2>/dev/null <<'R'
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(mirt, lib.loc = args[3]))
d <- read.csv(args[1]); threads <- as.integer(args[2])
if (threads > 1) suppressMessages(mirtCluster(threads))
t0 <- proc.time()
m <- mirt(d, 1, itemtype = "graded", SE = FALSE, verbose = FALSE)
s <- (proc.time() - t0)[["elapsed"]]
cat(sprintf('{"threads": %d, "seconds": %.3f, "cycles": %d, "log_likelihood": %.6f, "converged": %s}\n', threads, s,
            extract.mirt(m, "iterations"), logLik(m), tolower(extract.mirt(m, "converged"))))
R
    python3 - "$out/graded_iqscore_$t.jsonl" "$out/graded_mirt_$t.json" <<'PY'
import json, statistics, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
mirt = json.loads(open(sys.argv[2]).read())
med = statistics.median(r["seconds"] for r in ours)
print(f'threads {mirt["threads"]}: iqscore {med:.3f} s ({ours[0]["cycles"]} cycles, logLik {ours[0]["log_likelihood"]:.4f}) | '
      f'mirt {mirt["seconds"]:.3f} s ({mirt["cycles"]} cycles, logLik {mirt["log_likelihood"]:.4f}) | '
      f'ratio {mirt["seconds"] / med:.1f}x, logLik difference {ours[0]["log_likelihood"] - mirt["log_likelihood"]:+.4f}')
PY
done

#!/usr/bin/env bash
# W1 against mirt 1.47, thread for thread and at equal log-likelihood: dense 2PL, 100,000 persons x 100 items
# (`iqscore simulate --model 2pl --items 100 --persons 100000 --no-id --seed 42`, the data of Benchmarks/run.sh).
#
#   bash Benchmarks/w1-mirt.sh            (RUNS=3 iqscore runs per setting; MIRT_TOLS="1e-4 1e-5")
#
# iqscore: `calibrate --threads T`, the whole process (read, EM, standard errors, writing) by the wall clock, and
# the same with --no-se; medians of RUNS. mirt: `mirt(d, 1, "2PL", SE = FALSE, TOL = tol)` timed around the fit
# only (read.csv outside the clock), one run per tolerance; T = 2 with mirtCluster(2). Both use 61 nodes on
# [-6, 6]. mirt's default TOL (1e-4) stops farther below the maximum than iqscore's: the ratio that compares
# like with like is the one where mirt's log-likelihood is within 1e-3 of iqscore's (printed per tolerance).
# Needs mirt 1.47 built as ../shared/NOTES.md says (R_LIBS=/work/Rlib). Rows go to bench-out/w1_mirt.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}; tols=${MIRT_TOLS:-"1e-4 1e-5"}; rlib=${R_LIBS:-/work/Rlib}
out=bench-out; mkdir -p "$out"
swift build -c release --product iqscore 2>&1 | tail -1
bin=.build/release/iqscore
data=$out/w1_2pl_100000.csv
[ -s "$data" ] || "$bin" simulate --model 2pl --items 100 --persons 100000 --no-id --bank-out "$out/w1_2pl_true.csv" --seed 42 --out "$data"
rows=$out/w1_mirt.jsonl; : > "$rows"

# ours T SE(yes|no): RUNS wall-clock runs, one JSON row.
ours() {
    local t=$1 se=$2 flag=() times=()
    [ "$se" = no ] && flag=(--no-se)
    for _ in $(seq "$runs"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$bin" calibrate "$data" --model 2pl --threads "$t" "${flag[@]}" --out "$out/w1_mirt_ours.csv" --summary-json "$out/w1_mirt_ours.json" 2>/dev/null || true
        t1=$(date +%s.%N)
        times+=("$(echo "$t1 - $t0" | bc)")
    done
    python3 - "$out/w1_mirt_ours.json" "$t" "$se" "${times[@]}" >> "$rows" <<'PY'
import json, statistics, sys
s = json.load(open(sys.argv[1])); times = [float(x) for x in sys.argv[4:]]
print(json.dumps({"program": "iqscore", "threads": int(sys.argv[2]), "standard_errors": sys.argv[3] == "yes",
                  "seconds": statistics.median(times), "runs": times, "e_steps": s["e_steps"], "cycles": s["cycles"],
                  "fit_seconds": s["fit_seconds"], "log_likelihood": s["log_likelihood"]}))
PY
}

for t in 1 2; do
    ours "$t" yes
    ours "$t" no
    for tol in $tols; do
        Rscript - "$data" "$t" "$tol" "$rlib" >> "$rows" 2>/dev/null <<'R'
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(mirt, lib.loc = args[4]))
d <- read.csv(args[1]); threads <- as.integer(args[2]); tol <- as.numeric(args[3])
if (threads > 1) suppressMessages(mirtCluster(threads))
t0 <- proc.time()
m <- mirt(d, 1, itemtype = "2PL", SE = FALSE, verbose = FALSE, TOL = tol)
s <- (proc.time() - t0)[["elapsed"]]
cat(sprintf('{"program": "mirt", "threads": %d, "tolerance": %g, "seconds": %.3f, "cycles": %d, "log_likelihood": %.6f}\n',
            threads, tol, s, extract.mirt(m, "iterations"), logLik(m)))
R
    done
done

python3 - "$rows" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| threads | iqscore whole process, with SEs | iqscore, no SEs | mirt TOL | mirt fit | mirt log-lik − ours | ratio (with SEs) | ratio (no SEs) |")
print("|---|---|---|---|---|---|---|---|")
for t in (1, 2):
    se = next(r for r in rows if r["program"] == "iqscore" and r["threads"] == t and r["standard_errors"])
    no = next(r for r in rows if r["program"] == "iqscore" and r["threads"] == t and not r["standard_errors"])
    for m in (r for r in rows if r["program"] == "mirt" and r["threads"] == t):
        gap = m["log_likelihood"] - no["log_likelihood"]
        print(f'| {t} | {se["seconds"]:.2f} s ({se["e_steps"]} E-steps) | {no["seconds"]:.2f} s | {m["tolerance"]:g} | {m["seconds"]:.1f} s ({m["cycles"]} cycles) | '
              f'{gap:+.4f}{" (equal within 1e-3)" if abs(gap) <= 1e-3 else ""} | {m["seconds"] / se["seconds"]:.1f}x | {m["seconds"] / no["seconds"]:.1f}x |')
PY

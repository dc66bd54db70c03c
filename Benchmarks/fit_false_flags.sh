#!/usr/bin/env bash
# False-flag rates of every `iqscore analyze` fit statistic on data simulated from the model itself.
#
#   bash Benchmarks/fit_false_flags.sh [--quick] [--true-parameters]
#
# Each replication: `iqscore simulate` (2PL, seeded) -> `iqscore calibrate --model 2pl` -> `iqscore analyze`
# with its default thresholds; the counts come from the summary JSON's "fit_flags" (units tested and flagged
# per statistic). Every flag on such data is false, so flagged / tested is the false-flag rate. Designs:
#   dense-16    ICAR-like: 16 items x 1,500 persons, complete          (40 replications)
#   dense-40    40 items x 2,000 persons, complete                     (20 replications)
#   sparse-20k  1,500 items, sessions of 25 items, 20,000 sessions     (3 replications)
#   sparse-100k 1,500 items, sessions of 25 items, 100,000 sessions    (1 replication)
# --quick: a quarter of the replications (sparse-100k kept). --true-parameters: analyze with the generating
# bank instead of the calibrated one (separates the statistics' null behaviour from estimation error).
# Nominal levels at the defaults (--misfit-p 0.01): S-X² 1% of items; infit/outfit 1% each (two-sided ZSTD
# at 0.01, and the mean square outside 0.7-1.3, so at most 1%); RMSD at most 1% (above 0.1 and above the 99th
# percentile of its posterior predictive replicates); Q3 pairs: 0.01 flagged pairs per analysis (family-wise); l_z and l_z* < -1.96: 2.5% of persons.
# Results: bench-out/fit_false_flags.json and the table on stdout (Benchmarks/fit_false_flags_table.py).
# Needs python3 (standard library only).
# IQSCORE_BIN=path uses that binary instead of building one. BASELINE_BIN=path also runs that binary's analyze
# (e.g. one built from an earlier commit) on the same data and counts its flags from ITEMS.csv's flags column
# and the summary's q3_flagged_pairs ("before" rows).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0; truth=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        --true-parameters) truth=1 ;;
        *) echo "usage: bash Benchmarks/fit_false_flags.sh [--quick] [--true-parameters]" >&2; exit 2 ;;
    esac
done
scratch=${SCRATCH:-.build}
out=bench-out/fit_false_flags
mkdir -p "$out"
if [ -n "${IQSCORE_BIN:-}" ]; then bin=$IQSCORE_BIN; else
    swift build -c release --scratch-path "$scratch" --product iqscore 2>&1 | tail -1 >&2
    bin=$scratch/release/iqscore
fi

# run DESIGN REP SIMULATE-ARGS...: one replication; appends DESIGN<TAB>analyze ms<TAB>summary.json to the index.
index=$out/index.tsv
: > "$index"
run() {
    local design=$1 rep=$2; shift 2
    local base=$out/${design}_$rep seed=$((1000 + rep))
    rm -f "$base".baseline.*
    "$bin" simulate --model 2pl "$@" --out "$base.csv" --bank-out "$base.true.csv" --seed "$seed" 2>/dev/null
    local bank=$base.true.csv
    if [ "$truth" = 0 ]; then
        "$bin" calibrate "$base.csv" --model 2pl --out "$base.bank.csv" 2>/dev/null
        bank=$base.bank.csv
    fi
    local t0 t1
    t0=$(date +%s%N)
    "$bin" analyze "$base.csv" --bank "$bank" --out "$base.items.csv" --summary-json "$base.json" 2>/dev/null
    t1=$(date +%s%N)
    if [ -n "${BASELINE_BIN:-}" ]; then
        "$BASELINE_BIN" analyze "$base.csv" --bank "$bank" --out "$base.baseline.items.csv" --summary-json "$base.baseline.json" 2>/dev/null
    fi
    printf '%s\t%s\t%s\n' "$design" "$(( (t1 - t0) / 1000000 ))" "$base.json" >> "$index"
    rm -f "$base.csv"
}

reps() { if [ "$quick" = 1 ]; then echo $(( ($1 + 3) / 4 )); else echo "$1"; fi; }
for r in $(seq 1 "$(reps 40)"); do run dense-16 "$r" --items 16 --persons 1500; done
for r in $(seq 1 "$(reps 20)"); do run dense-40 "$r" --items 40 --persons 2000; done
for r in $(seq 1 "$(reps 3)"); do run sparse-20k "$r" --items 1500 --items-per-session 25 --persons 20000 --layout long; done
run sparse-100k 1 --items 1500 --items-per-session 25 --persons 100000 --layout long

python3 Benchmarks/fit_false_flags_table.py "$index" "$out.json" "$truth"

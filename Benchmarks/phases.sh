#!/usr/bin/env bash
# Calibration phase by phase, on 1 and 2 threads (or THREADS="1 2 4 8 16"), with the machine's own limits
# measured in the same run:  bash Benchmarks/phases.sh [--scale N] [--only W1,W2,W2x10]
#
#   W1     dense 2PL, 100,000 persons x 100 items (wide)          seed 42, as Benchmarks/run.sh
#   W2     sparse 2PL bank, 1,500 items, 200,000 sessions x 25    seed 43, as Benchmarks/run.sh
#   W2x10  the same bank design with 2,000,000 sessions (cost growth; 800 MB of CSV)
#
# For each workload and thread count: read, E-step, M-step and standard-error seconds (median of 3 runs; the
# machine is shared), the speed-up of each phase from the first thread count to each later one, the standard
# errors' share of the fit (EM + SEs) and of the whole run, and the E-step (E/dgemm) and EM times against two references measured on
# the same number of threads: `blas-reference` (OpenBLAS dgemm doing the E-steps' multiply-adds, cells x 61
# nodes x 2 per E-step) and `blas-reference rows` (the E-steps' row traffic without their arithmetic: per
# answer one 61-node table row read and one count row updated, items at random; `RowTrafficReference`; it is
# the sparse E-step's floor: W1 runs the dense, dgemm E-step).
# Rows go to bench-out/phases.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=1; only="W1,W2,W2x10"
while [ $# -gt 0 ]; do
    case "$1" in
        --scale) scale=$2; shift ;;
        --only) only=$2; shift ;;
        *) echo "usage: bash Benchmarks/phases.sh [--scale N] [--only W1,W2,W2x10]" >&2; exit 64 ;;
    esac
    shift
done
threads=${THREADS:-"1 2"}
scratch=${SCRATCH:-.build}
out=bench-out; mkdir -p "$out"
for product in iqscore blas-reference; do
    ${BUILD_LOCK:+flock "$BUILD_LOCK"} swift build -c release --scratch-path "$scratch" --product "$product" 2>&1 | tail -1
done
bin=$scratch/release
rows=$out/phases.jsonl; : > "$rows"
want() { [[ ",$only," == *",$1,"* ]]; }
n1=$((100000 / scale)); n2=$((200000 / scale)); n3=$((2000000 / scale))
gen() { [ -s "$1" ] || "$bin/iqscore" simulate "${@:2}" --out "$1" 2>/dev/null; }
bank=(--items 1500 --items-per-session 25 --layout long --domains pattern,logic,spatial,math,verbal,memory)
want W1 && gen "$out/w1_2pl_$n1.csv" --model 2pl --items 100 --persons "$n1" --no-id --bank-out "$out/w1_2pl_true.csv" --seed 42
want W2 && gen "$out/w2_2pl_$n2.csv" --model 2pl "${bank[@]}" --persons "$n2" --bank-out "$out/w2_2pl_true.csv" --seed 43
want W2x10 && gen "$out/w2x10_2pl_$n3.csv" --model 2pl "${bank[@]}" --persons "$n3" --bank-out "$out/w2x10_2pl_true.csv" --seed 43

run() {   # run NAME FILE ITEMS
    local name=$1 file=$2 items=$3 first=""
    for t in $threads; do
        for k in 1 2 3; do
            "$bin/iqscore" calibrate "$file" --model 2pl --threads "$t" --out "$out/phases_${name}_bank.csv" \
                --summary-json "$out/phases_${name}_t${t}_$k.json" 2> /dev/null
        done
        python3 - "$out" "$name" "$t" "$items" "$bin/blas-reference" "$rows" <<'EOF'
import json, statistics, subprocess, sys
out, name, t, items, reference, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
runs = [json.load(open(f"{out}/phases_{name}_t{t}_{k}.json")) for k in (1, 2, 3)]
med = lambda key: statistics.median(r[key] for r in runs)
row = {"workload": name, "threads": t, "read": med("read_seconds"), "e_step": med("e_step_seconds"),
       "m_step": med("m_step_seconds"), "standard_errors": med("standard_error_seconds"),
       "whole": med("elapsed_seconds"), "e_steps": runs[1]["e_steps"], "cells": runs[1]["n_responses"],
       "log_likelihood": runs[1]["log_likelihood"], "persons": runs[1]["n_persons"]}
work = row["cells"] * 61 * 2 * row["e_steps"]
row["blas_reference"] = float(subprocess.check_output([reference, str(work), str(items), "61", str(t)]).decode())
row["row_reference"] = float(subprocess.check_output([reference, "rows", str(row["cells"]), str(items), "61",
                                                       str(max(1, round(row["cells"] / row["persons"]))), str(row["e_steps"]), str(t)]).decode())
em = row["e_step"] + row["m_step"]
row["em_over_blas"] = em / row["blas_reference"]
row["e_over_blas"] = row["e_step"] / row["blas_reference"]
row["em_over_rows"] = em / row["row_reference"]
row["se_share_of_fit"] = row["standard_errors"] / (em + row["standard_errors"])
row["se_share_of_whole"] = row["standard_errors"] / row["whole"]
open(rows, "a").write(json.dumps(row) + "\n")
EOF
    done
}
want W1 && run W1 "$out/w1_2pl_$n1.csv" 100
want W2 && run W2 "$out/w2_2pl_$n2.csv" 1500
want W2x10 && run W2x10 "$out/w2x10_2pl_$n3.csv" 1500

python3 - "$rows" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'workload':8} {'thr':>3} {'read':>7} {'E-step':>7} {'M-step':>7} {'SEs':>7} {'whole':>7}  {'SE/fit':>6} {'SE/whole':>8} {'E/dgemm':>7} {'EM/dgemm':>8} {'EM/rows':>7}  speed-up read/E/M/SE/whole")
first = {}
for r in rows:
    base = first.setdefault(r["workload"], r)
    ups = "/".join(f"{base[k] / r[k]:.2f}" for k in ("read", "e_step", "m_step", "standard_errors", "whole"))
    print(f"{r['workload']:8} {r['threads']:>3} {r['read']:7.3f} {r['e_step']:7.3f} {r['m_step']:7.3f} {r['standard_errors']:7.3f} "
          f"{r['whole']:7.3f}  {r['se_share_of_fit']:6.1%} {r['se_share_of_whole']:8.1%} {r['e_over_blas']:7.2f} {r['em_over_blas']:8.2f} {r['em_over_rows']:7.2f}  {ups if r is not base else '-'}")
EOF

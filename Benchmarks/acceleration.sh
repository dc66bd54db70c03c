#!/usr/bin/env bash
# EM acceleration: plain EM (--acceleration none) against SQUAREM on the same data, in the same run.
#   bash Benchmarks/acceleration.sh [--quick] [--w2-persons N]      (BUILD_LOCK=FILE: build under flock FILE)
#
# W1      dense 2PL 100,000 x 100                      (seed 42, as Benchmarks/run.sh)
# W1-3PL  dense 3PL 100,000 x 100                      (seed 44)
# W2      sparse 2PL bank: 1,500 items, 200,000 x 25   (seed 43)
# ICAR16  3PL on Data/icar16.csv (default priors)
# S3PL    sparse 3PL bank: 1,500 items, 20,000 x 25, default priors, default tolerance (seed 45)
# Each fit at --tolerance 1e-4 (the default) and 1e-6 (S3PL: 1e-4 only), standard errors off (--no-se): the
# table gives E-steps, EM seconds (E- plus M-steps) and log-likelihoods, plus the log-likelihood each run ends
# short of plain EM's at 1e-6. --quick divides persons by 10. Prints a Markdown table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=1; w2=200000
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) scale=10 ;;
        --w2-persons) w2=$2; shift ;;
        *) echo "usage: bash Benchmarks/acceleration.sh [--quick] [--w2-persons N]" >&2; exit 64 ;;
    esac
    shift
done
scratch=${SCRATCH:-.build}
# BUILD_LOCK=/tmp/iqscore-build.lock: build under flock (a machine shared by several builds).
${BUILD_LOCK:+flock "$BUILD_LOCK" nice} swift build -c release --scratch-path "$scratch" --product iqscore 2>&1 | tail -1 >&2
bin=$scratch/release/iqscore
out=bench-out; mkdir -p "$out"
n1=$((100000 / scale)); n2=$((w2 / scale)); ns=$((20000 / scale))
gen() { [ -s "$1" ] || "$bin" simulate "${@:2}" --out "$1" 2>/dev/null; }
domains=pattern,logic,spatial,math,verbal,memory
gen "$out/w1_2pl_$n1.csv" --model 2pl --items 100 --persons "$n1" --no-id --bank-out "$out/w1_2pl_true.csv" --seed 42
gen "$out/w1_3pl_$n1.csv" --model 3pl --items 100 --persons "$n1" --no-id --bank-out "$out/w1_3pl_true.csv" --seed 44
gen "$out/w2_2pl_$n2.csv" --model 2pl --items 1500 --items-per-session 25 --persons "$n2" --layout long --domains "$domains" \
    --bank-out "$out/w2_2pl_true.csv" --seed 43
gen "$out/s3pl_$ns.csv" --model 3pl --items 1500 --items-per-session 25 --persons "$ns" --layout long --domains "$domains" \
    --bank-out "$out/s3pl_true.csv" --seed 45

# fit NAME DATA MODEL TOLERANCE ACCELERATION: prints "e_steps converged em_seconds log_likelihood"
fit() {
    local json="$out/accel_$1_$4_$5.json"
    "$bin" calibrate "$2" --model "$3" --tolerance "$4" --acceleration "$5" --no-se --out "$out/accel_$1_$4_$5.csv" \
        --summary-json "$json" 2> /dev/null || true
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['e_steps'], d['converged'], d['e_step_seconds'] + d['m_step_seconds'], repr(d['log_likelihood']))" "$json"
}

echo "| workload | tolerance | E-steps plain → SQUAREM | E-steps ratio | EM seconds plain → SQUAREM | seconds ratio | log-lik. plain | SQUAREM − plain | plain short of plain@1e-6 | SQUAREM short of plain@1e-6 |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row() {  # row NAME DATA MODEL TOLERANCES…
    local name=$1 data=$2 model=$3; shift 3
    local best="" tol
    for tol in $(printf '%s\n' "$@" | sort -g); do   # 1e-6 first: the reference log-likelihood
        read -r pe pc ps pl <<< "$(fit "$name" "$data" "$model" "$tol" none)"
        read -r se sc ss sl <<< "$(fit "$name" "$data" "$model" "$tol" squarem)"
        [ -z "$best" ] && [ "$pc" = True ] && best=$pl
        python3 - "$name" "$tol" "$pe" "$pc" "$ps" "$pl" "$se" "$sc" "$ss" "$sl" "${best:-nan}" <<'EOF'
import sys
name, tol, pe, pc, ps, pl, se, sc, ss, sl, best = sys.argv[1:]
pe, se, ps, ss, pl, sl, best = int(pe), int(se), float(ps), float(ss), float(pl), float(sl), float(best)
mark = lambda e, c: f"{e}" + ("" if c == "True" else " (not converged)")
short = lambda x: "–" if best != best else f"{best - x:.2e}"
print(f"| {name} | {tol} | {mark(pe, pc)} → {mark(se, sc)} | {pe / se:.2f}× | {ps:.2f} → {ss:.2f} | {ps / ss:.2f}× | {pl:.4f} | {sl - pl:+.2e} | {short(pl)} | {short(sl)} |")
EOF
    done
}
row W1 "$out/w1_2pl_$n1.csv" 2pl 1e-4 1e-6
row W1-3PL "$out/w1_3pl_$n1.csv" 3pl 1e-4 1e-6
row W2 "$out/w2_2pl_$n2.csv" 2pl 1e-4 1e-6
row ICAR16-3PL Data/icar16.csv 3pl 1e-4 1e-6
row S3PL "$out/s3pl_$ns.csv" 3pl 1e-4

#!/usr/bin/env bash
# The scoring benchmark (W3, Benchmarks/scoring.sh) with response times (issue 30): `iqscore score` on 1,000,000
# sessions x 25 responses in long CSV with a seconds column (`simulate --times`, speed SD 0.3, correlation 0.3),
# scored without times and with `--time-column seconds` on the same file and bank, in PAIRS back-to-back pairs
# (default 5); the ratio is the median of the pairs' ratios (this shared machine's speed drifts within minutes).
#
#   bash Benchmarks/scoring_times.sh [--quick]      # --quick: 100,000 sessions
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=1000000
[ "${1:-}" = "--quick" ] && sessions=100000
pairs=${PAIRS:-5}
out=bench-out
mkdir -p "$out"
swift build -c release --product iqscore 2>&1 | tail -1
bin=.build/release/iqscore
data=$out/score_times_${sessions}.csv
bank=$out/score_times_${sessions}_bank.csv
[ -s "$data" ] || "$bin" simulate --model 2pl --items 1500 --items-per-session 25 --persons "$sessions" --layout long \
    --domains pattern,logic,spatial,math,verbal,memory --times --speed-sd 0.3 --speed-correlation 0.3 \
    --out "$data" --bank-out "$bank" --seed 11
now() { date +%s.%N; }
results=()
for _ in $(seq "$pairs"); do
    t0=$(now); "$bin" score "$data" --bank "$bank" --out "$out/scores_untimed.csv" 2>/dev/null; t1=$(now)
    "$bin" score "$data" --bank "$bank" --out "$out/scores_timed.csv" --time-column seconds 2>/dev/null; t2=$(now)
    results+=("$(python3 -c "print($t1 - $t0, $t2 - $t1)")")
done
python3 - "${results[@]}" <<'PY'
import statistics, sys
pairs = [tuple(map(float, x.split())) for x in sys.argv[1:]]
for k, (a, b) in enumerate(pairs, 1):
    print(f"pair {k}: without {a:.3f} s, with times {b:.3f} s, ratio {b / a:.2f}")
ratio = statistics.median(b / a for a, b in pairs)
print(f"score with times: {ratio:.2f}x the time without (median of {len(pairs)} pairs; goal <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})")
PY

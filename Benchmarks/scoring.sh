#!/usr/bin/env bash
# Scoring benchmark: `iqscore score` on 1,000,000 sessions x 25 responses (long CSV from `iqscore simulate`,
# 2PL bank of 1,500 items in six domains), next to the speed of merely reading the same file in the same run.
#
#   bash Benchmarks/scoring.sh [--quick]      # --quick: 100,000 sessions
#
# Reports the median of 3 runs: seconds, sessions/s, MB/s, peak RSS, and the ratio to `cat FILE > /dev/null`
# (best of 3; the file is in the page cache by then, so this is the memory-speed limit of reading it).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=1000000
[ "${1:-}" = "--quick" ] && sessions=100000
scratch=${SCRATCH:-.build}
out=bench-out
mkdir -p "$out"
command -v /usr/bin/time >/dev/null || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }
swift build -c release --scratch-path "$scratch" --product iqscore 2>&1 | tail -1
bin=$scratch/release/iqscore
data=$out/score_${sessions}.csv
bank=$out/score_${sessions}_bank.csv
[ -s "$data" ] || "$bin" simulate --model 2pl --items 1500 --items-per-session 25 --persons "$sessions" --layout long \
    --domains pattern,logic,spatial,math,verbal,memory --out "$data" --bank-out "$bank" --seed 11
bytes=$(stat -c %s "$data")

now() { date +%s.%N; }
cat_best=999
for _ in 1 2 3; do
    t0=$(now); cat "$data" > /dev/null; t1=$(now)
    cat_best=$(python3 -c "print(min($cat_best, $t1 - $t0))")
done
runs=()
rss=0
for k in 1 2 3; do
    t0=$(now)
    /usr/bin/time -v "$bin" score "$data" --bank "$bank" --out "$out/scores_${sessions}.csv" 2> "$out/score_run_$k.log"
    t1=$(now)
    runs+=("$(python3 -c "print($t1 - $t0)")")
    r=$(awk -F': ' '/Maximum resident set size/ {printf "%d", $2/1024}' "$out/score_run_$k.log")
    [ "$r" -gt "$rss" ] && rss=$r
done
python3 - "$bytes" "$sessions" "$cat_best" "$rss" "$out/scoring.json" "${runs[@]}" <<'PY'
import json, statistics, sys
bytes_, sessions, cat_s, rss, path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
runs = [float(x) for x in sys.argv[6:]]
med = statistics.median(runs)
mb = bytes_ / 1e6
rows = [("workload", "seconds (median of 3)", "sessions/s", "MB/s", "peak RSS"),
        ("iqscore score, %d sessions x 25 (%.0f MB long CSV)" % (sessions, mb), "%.2f" % med, "%.0f" % (sessions / med), "%.0f" % (mb / med), "%d MB" % rss),
        ("cat FILE > /dev/null (best of 3, page cache)", "%.3f" % cat_s, "", "%.0f" % (mb / cat_s), ""),
        ("scoring speed / read speed", "%.1f%%" % (100 * cat_s / med), "", "", "")]
w = [max(len(r[k]) for r in rows) for k in range(5)]
for r in rows:
    print("| " + " | ".join(r[k].ljust(w[k]) for k in range(5)) + " |")
    if r[0] == "workload": print("|" + "|".join("-" * (w[k] + 2) for k in range(5)) + "|")
json.dump({"workload": "score", "sessions": sessions, "bytes": bytes_, "seconds_runs": runs, "seconds_median": med,
           "sessions_per_second": sessions / med, "mb_per_second": mb / med, "peak_rss_mb": rss,
           "reference": "cat FILE > /dev/null", "reference_seconds": cat_s, "ratio": med / cat_s}, open(path, "w"), indent=2)
print("wrote", path)
PY

#!/usr/bin/env bash
# Scoring a file larger than memory budgets, contiguous and shuffled: bash Benchmarks/large_file.sh [--sessions N] [--json FILE]
#
# Generates (once, into bench-out/large/) a long-layout file of N sessions x 25 responses from a 1,500-item
# bank (default N = 10,000,000: about 4.2 GB) with `iqscore simulate` (seed 11, as W3), and the same rows
# shuffled (an external shuffle: each row gets a seeded awk rand() key and one of 64
# buckets, each bucket is sorted by its keys). Then scores each file with the default --max-memory (1G) and with --max-memory 256M, one run each,
# and prints: seconds, MB/s, peak RSS (GNU time), regroup partitions, and the same-run references `cat FILE`
# (page cache) and `dd iflag=direct` (the device). Checks that both budgets give byte-identical scores and
# rejects, and that each run's manifest verifies. Writes one JSON object per run to --json (default
# bench-out/large/large.json). Needs ~3x the file size of free disk (the two files, spill files, outputs).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=10000000; json=""
while [ $# -gt 0 ]; do
    case "$1" in
        --sessions) sessions=$2; shift ;;
        --json) json=$2; shift ;;
        *) echo "usage: bash Benchmarks/large_file.sh [--sessions N] [--json FILE]" >&2; exit 64 ;;
    esac
    shift
done
command -v /usr/bin/time >/dev/null || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }
scratch=${SCRATCH:-.build}
swift build -c release --scratch-path "$scratch" --product iqscore 2>&1 | tail -1
bin=$scratch/release/iqscore
out=bench-out/large; mkdir -p "$out"
json=${json:-$out/large.json}; : > "$json"
data=$out/sessions_$sessions.csv; shuffled=$out/shuffled_$sessions.csv; bank=$out/bank.csv

if [ ! -s "$data" ]; then
    echo "generating $data" >&2
    "$bin" simulate --model 2pl --items 1500 --items-per-session 25 --persons "$sessions" --layout long \
        --domains pattern,logic,spatial,math,verbal,memory --bank-out "$bank" --seed 11 --out "$data" >&2
fi
if [ ! -s "$shuffled" ]; then
    echo "shuffling into $shuffled" >&2
    buckets=$out/buckets; rm -rf "$buckets"; mkdir -p "$buckets"
    head -n 1 "$data" > "$shuffled.tmp"
    tail -n +2 "$data" | awk -v dir="$buckets" 'BEGIN { srand(11) } { printf "%.9f\t%s\n", rand(), $0 > (dir "/" int(rand() * 64)) }'
    for b in "$buckets"/*; do LC_ALL=C sort -t "$(printf '\t')" -k1,1 -S 512M "$b" | cut -f2- >> "$shuffled.tmp"; rm "$b"; done
    mv "$shuffled.tmp" "$shuffled"; rm -rf "$buckets"
fi
bytes=$(stat -c %s "$data")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1e6 }')

t0=$(date +%s.%N); cat "$data" > /dev/null; t1=$(date +%s.%N)
cat_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
dd_s=$(dd if="$data" of=/dev/null bs=4M iflag=direct 2>&1 | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s," || $i == "s") { print $(i - 1); exit } }')

printf "%-11s %-8s %9s %9s %10s %11s\n" order budget seconds "MB/s" "peak RSS" partitions
for order in contiguous shuffled; do
    file=$data; [ "$order" = shuffled ] && file=$shuffled
    for budget in 1G 256M; do
        o=$out/scores_${order}_$budget.csv
        /usr/bin/time -v "$bin" score "$file" --bank "$bank" --out "$o" --max-memory "$budget" 2> "$out/${order}_$budget.log" || true
        secs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" "${o%.csv}.summary.json")
        parts=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['regroup_partitions'])" "${o%.csv}.summary.json")
        rss=$(awk -F': ' '/Maximum resident set size/ { printf "%d", $2 / 1024 }' "$out/${order}_$budget.log")
        rate=$(awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.1f", b / 1e6 / s }')
        "$bin" verify "${o%.csv}.summary.json" 2>/dev/null || { echo "manifest of $o does not verify" >&2; exit 1; }
        printf "%-11s %-8s %9.2f %9s %7s MB %11s\n" "$order" "$budget" "$secs" "$rate" "$rss" "$parts"
        printf '{"workload":"large-%s","max_memory":"%s","sessions":%s,"bytes":%s,"seconds":%s,"mb_per_s":%s,"peak_rss_mb":%s,"regroup_partitions":%s,"cat_seconds":%s,"dd_direct_seconds":%s}\n' \
            "$order" "$budget" "$sessions" "$bytes" "$secs" "$rate" "$rss" "$parts" "$cat_s" "${dd_s:-null}" >> "$json"
    done
    cmp -s "$out/scores_${order}_1G.csv" "$out/scores_${order}_256M.csv" && cmp -s "$out/scores_${order}_1G.rejects.csv" "$out/scores_${order}_256M.rejects.csv" \
        || { echo "$order: 1G and 256M outputs differ" >&2; exit 1; }
done
echo "file: $mb MB; cat (page cache) ${cat_s} s, dd iflag=direct ${dd_s:-?} s; outputs identical across budgets; manifests verify" >&2

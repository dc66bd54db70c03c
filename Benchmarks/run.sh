#!/usr/bin/env bash
# One command for every workload: bash Benchmarks/run.sh [--quick] [--json FILE] [--only LIST]
#
# W1  dense 2PL calibration, 100,000 persons x 100 items          reference: girth 0.8.0 (same data), and the
#     (+ W1-3PL)                                                              E-step's own BLAS products
# W2  sparse bank calibration, 1,500 items, 200,000 sessions x 25 reference: OpenBLAS dgemm doing the same
#     (+ W2-3PL)                                                              multiply-adds as the E-steps
# W3  scoring 1,000,000 sessions x 25 (long CSV)                 reference: cat FILE > /dev/null; girth EAP on
#                                                                           the first 20,000 sessions; 10 sessions
#                                                                           with the default threads vs one thread
# W4  one 25-item balanced form from 1,500 items                 reference: the 1 ms aim (no peer)
# W5  one CAT step on 1,500 items; a 10,000-simulee CAT study    reference: the 100 µs aim (no peer)
#
# Data come from `iqscore simulate` (fixed seeds) into bench-out/ and are reused. Our times are medians of 3
# runs (girth: 1 run); peak RSS from /usr/bin/time -v. --quick divides persons/sessions by 10; --only W3,W5 (say) runs just those. Prints a table and
# writes one JSON object per workload (workload, seconds_median, throughput, peak_rss_mb, reference,
# reference_seconds, ratio, …) to --json FILE (default bench-out/bench.json).
set -euo pipefail
cd "$(dirname "$0")/.."
scale=1; json=bench-out/bench.json; only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) scale=10 ;;
        --json) json=$2; shift ;;
        --only) only=$2; shift ;;
        *) echo "usage: bash Benchmarks/run.sh [--quick] [--json FILE] [--only W1,W1-3PL,W2,W2-3PL,W3,W4,W5]" >&2; exit 64 ;;
    esac
    shift
done
scratch=${SCRATCH:-.build}
out=bench-out; mkdir -p "$out"
venv=../.peers-venv
[ -x "$venv/bin/python" ] || bash ../shared/peers/setup.sh
command -v /usr/bin/time >/dev/null || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }
for product in iqscore blas-reference assembly-latency cat-latency; do
    swift build -c release --scratch-path "$scratch" --product "$product" 2>&1 | tail -1
done
bin=$scratch/release
py=$venv/bin/python
rows=$out/bench_rows.jsonl; : > "$rows"

want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
source Benchmarks/workload_data.sh
workload_sizes "$scale"
workload_data "$bin/iqscore" "$out"

rss() { awk -F': ' '/Maximum resident set size/ {printf "%d", $2/1024}' "$1"; }
field() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
median() { "$py" -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
row() { "$py" -c 'import json,sys; print(json.dumps(dict(zip(sys.argv[1::2], [json.loads(v) if v[:1] in "-0123456789[{tn\"" else v for v in sys.argv[2::2]]))))' "$@" >> "$rows"; }

# calibrate_runs NAME DATA MODEL: 3 runs; sets med (read+fit+SE seconds), em (EM seconds), blas, cycles, esteps
# (E-steps: cycles + SQUAREM's rejected extrapolations), cells, ll, peak.
calibrate_runs() {
    local name=$1 data=$2 model=$3 times=() ems=() k
    peak=0
    for k in 1 2 3; do
        /usr/bin/time -v "$bin/iqscore" calibrate "$data" --model "$model" --out "$out/${name}_bank.csv" \
            --summary-json "$out/${name}_$k.json" 2> "$out/${name}_$k.log" || true
        times+=("$(field "$out/${name}_$k.json" elapsed_seconds)")
        ems+=("$("$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['e_step_seconds']+d['m_step_seconds'])" "$out/${name}_$k.json")")
        r=$(rss "$out/${name}_$k.log"); [ "$r" -gt "$peak" ] && peak=$r
    done
    med=$(median "${times[@]}"); em=$(median "${ems[@]}")
    blas=$(field "$out/${name}_2.json" e_step_blas_seconds); cycles=$(field "$out/${name}_2.json" cycles)
    esteps=$(field "$out/${name}_2.json" e_steps)
    cells=$(field "$out/${name}_2.json" n_responses); ll=$(field "$out/${name}_2.json" log_likelihood)
}

if want W1; then
echo "== W1 dense 2PL $n1 x 100" >&2
calibrate_runs w1 "$out/w1_2pl_$n1.csv" 2pl
/usr/bin/time -v ../shared/peers/girth_fit.py "$out/w1_2pl_$n1.csv" 2PL "$out/w1_girth" > "$out/w1_girth.out" 2> "$out/w1_girth.log"
girth=$(sed -E 's/.*fit_s=([0-9.]+).*/\1/' "$out/w1_girth.out")
ll_ours=$("$py" Benchmarks/marginal_loglik.py "$out/w1_2pl_$n1.csv" "$out/w1_bank.csv")
ll_girth=$("$py" Benchmarks/marginal_loglik.py "$out/w1_2pl_$n1.csv" "$out/w1_girth_items.csv")
row workload W1 description "\"dense 2PL calibration $n1 x 100 (read + EM + SEs)\"" seconds_median "$med" \
    throughput "$("$py" -c "print($n1/$med)")" throughput_unit '"persons/s"' peak_rss_mb "$peak" reference '"girth 0.8.0 twopl_mml, same data"' \
    reference_seconds "$girth" ratio "$("$py" -c "print($girth/$med)")" ratio_meaning '"girth time / iqscore time"' \
    loglik "$ll_ours" reference_loglik "$ll_girth" reference_peak_rss_mb "$(rss "$out/w1_girth.log")"
row workload W1-blas description '"dense 2PL EM cycles vs their own BLAS products"' seconds_median "$em" throughput "$("$py" -c "print($cycles/$em)")" \
    throughput_unit '"cycles/s"' peak_rss_mb "$peak" reference '"the E-step BLAS products (dgemm) of the same cycles"' reference_seconds "$blas" \
    ratio "$("$py" -c "print($em/$blas)")" ratio_meaning '"EM time / BLAS time (target <= 3)"'

fi

if want W1-3PL; then
echo "== W1-3PL dense 3PL $n1 x 100" >&2
calibrate_runs w13 "$out/w1_3pl_$n1.csv" 3pl
row workload W1-3PL description "\"dense 3PL calibration $n1 x 100 (read + EM + SEs)\"" seconds_median "$med" \
    throughput "$("$py" -c "print($n1/$med)")" throughput_unit '"persons/s"' peak_rss_mb "$peak" \
    reference '"the E-step BLAS products (dgemm) of the same cycles"' reference_seconds "$blas" \
    ratio "$("$py" -c "print($em/$blas)")" ratio_meaning '"EM time / BLAS time"' cycles "$cycles" loglik "$ll"

fi

for m in 2pl 3pl; do
    name=W2; [ "$m" = 3pl ] && name=W2-3PL
    want "$name" || continue
    echo "== W2 sparse $m bank 1500 items, $n2 sessions x 25" >&2
    calibrate_runs "w2$m" "$out/w2_${m}_$n2.csv" "$m"
    work=$("$py" -c "print($cells * 61 * 2 * $esteps)")
    ref=$("$bin/blas-reference" "$work" 100 61)
    row workload "$name" description "\"sparse $m bank calibration: 1,500 items, $n2 sessions x 25 (read + EM + SEs)\"" \
        seconds_median "$med" throughput "$("$py" -c "print($n2/$med)")" throughput_unit '"sessions/s"' peak_rss_mb "$peak" \
        reference '"OpenBLAS dgemm doing the E-steps multiply-adds (cells x 61 nodes x 2 per E-step)"' reference_seconds "$ref" \
        ratio "$("$py" -c "print($em/$ref)")" ratio_meaning '"EM time / BLAS time for the same arithmetic"' cycles "$cycles" e_steps "$esteps" em_seconds "$em" loglik "$ll"
done

if want W3; then
echo "== W3 scoring $n3 sessions x 25" >&2
bytes=$(stat -c %s "$out/w3_$n3.csv")
cats=(); for k in 1 2 3; do t0=$(date +%s.%N); cat "$out/w3_$n3.csv" > /dev/null; t1=$(date +%s.%N); cats+=("$("$py" -c "print($t1-$t0)")"); done
cat_best=$("$py" -c "import sys; print(min(map(float, sys.argv[1:])))" "${cats[@]}")
# The storage device's own read speed (O_DIRECT bypasses the page cache), best of 3; 0 where unsupported.
dds=(); for k in 1 2 3; do t0=$(date +%s.%N); if dd if="$out/w3_$n3.csv" of=/dev/null bs=4M iflag=direct 2>/dev/null; then t1=$(date +%s.%N); dds+=("$("$py" -c "print($t1-$t0)")"); fi; done
dd_best=$("$py" -c "import sys; v = [float(a) for a in sys.argv[1:] if a]; print(min(v) if v else 0)" ${dds[@]+"${dds[@]}"})
times=(); peak=0
for k in 1 2 3; do
    t0=$(date +%s.%N)
    /usr/bin/time -v "$bin/iqscore" score "$out/w3_$n3.csv" --bank "$out/w3_bank.csv" --out "$out/w3_scores.csv" 2> "$out/w3_$k.log" || true
    t1=$(date +%s.%N); times+=("$("$py" -c "print($t1-$t0)")")
    r=$(rss "$out/w3_$k.log"); [ "$r" -gt "$peak" ] && peak=$r
done
med=$(median "${times[@]}")
row workload W3 description "\"scoring $n3 sessions x 25, EAP ($((bytes / 1000000)) MB long CSV)\"" seconds_median "$med" \
    throughput "$("$py" -c "print($n3/$med)")" throughput_unit '"sessions/s"' peak_rss_mb "$peak" \
    reference '"cat FILE > /dev/null (best of 3, page cache)"' reference_seconds "$cat_best" \
    ratio "$("$py" -c "print($med/$cat_best)")" ratio_meaning '"scoring time / read time"' mb_per_second "$("$py" -c "print($bytes/1e6/$med)")" \
    device_read_seconds "$dd_best" device_ratio "$("$py" -c "print($med/$dd_best if $dd_best > 0 else 0)")"
sub=20000
head -n $((sub * 25 + 1)) "$out/w3_$n3.csv" > "$out/w3_sub.csv"
ours=(); for k in 1 2 3; do t0=$(date +%s.%N); "$bin/iqscore" score "$out/w3_sub.csv" --bank "$out/w3_bank.csv" --out "$out/w3_sub_scores.csv" 2>/dev/null || true; t1=$(date +%s.%N); ours+=("$("$py" -c "print($t1-$t0)")"); done
ours_med=$(median "${ours[@]}")
girth_eap=$("$py" Benchmarks/girth_eap_sessions.py "$out/w3_sub.csv" "$out/w3_bank.csv" "$sub")
row workload W3-girth description "\"scoring the first $sub sessions (whole command) vs girth ability_eap alone\"" seconds_median "$ours_med" \
    throughput "$("$py" -c "print($sub/$ours_med)")" throughput_unit '"sessions/s"' peak_rss_mb 0 reference '"girth 0.8.0 ability_eap, same sessions and bank"' \
    reference_seconds "$girth_eap" ratio "$("$py" -c "print($girth_eap/$ours_med)")" ratio_meaning '"girth time / iqscore time"'
# A small file with the default threads against one thread, alternating, median of 5: a fixed cost of the parallel
# path (issue 26: a 1.0 s stall waiting for a libdispatch thread) shows as a ratio far above 1.
head -n $((10 * 25 + 1)) "$out/w3_$n3.csv" > "$out/w3_small.csv"
small=(); single=()
for k in 1 2 3 4 5; do
    t0=$(date +%s.%N); "$bin/iqscore" score "$out/w3_small.csv" --bank "$out/w3_bank.csv" --out "$out/w3_small_scores.csv" 2>/dev/null || true
    t1=$(date +%s.%N); "$bin/iqscore" score "$out/w3_small.csv" --bank "$out/w3_bank.csv" --out "$out/w3_small_scores.csv" --threads 1 2>/dev/null || true
    t2=$(date +%s.%N); small+=("$("$py" -c "print($t1-$t0)")"); single+=("$("$py" -c "print($t2-$t1)")")
done
small_med=$(median "${small[@]}"); single_med=$(median "${single[@]}")
row workload W3-small description '"scoring 10 sessions x 25 (long CSV, whole command), default threads"' seconds_median "$small_med" \
    throughput "$("$py" -c "print(10/$small_med)")" throughput_unit '"sessions/s"' peak_rss_mb 0 reference '"the same with --threads 1"' \
    reference_seconds "$single_med" ratio "$("$py" -c "print($small_med/$single_med)")" \
    ratio_meaning '"default-threads time / one-thread time (about 1 without a fixed cost of the parallel path)"'

fi

if want W4 || want W5; then
echo "== W4 assembly, W5 CAT" >&2
"$bin/assembly-latency" > "$out/w4.txt"
"$bin/cat-latency" > "$out/w5.txt"
"$py" - "$out/w4.txt" "$out/w5.txt" "$rows" <<'PY'
import json, sys
def table(path):
    out = []
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 2 and not set(cells[0]) <= set("-") and cells[0] not in ("blueprint", "configuration"):
            out.append(cells)
    return out
w4 = {r[0]: r for r in table(sys.argv[1])}
r = w4["domain × difficulty counts"]
median_ms = float(r[2])
rows = [dict(workload="W4", description="one 25-item form, domain x difficulty counts, 1,500 items (median of 2,000)",
             seconds_median=median_ms / 1000, throughput=1000 / median_ms, throughput_unit="forms/s", peak_rss_mb=0,
             reference="the 1 ms aim", reference_seconds=0.001, ratio=median_ms / 1, ratio_meaning="time / aim (<= 1 meets it)",
             p99_ms=float(r[3]))]
w5 = [r for r in table(sys.argv[2]) if r[0].startswith("app rules + Sympson")][0]
step_us = float(w5[-1])
rows.append(dict(workload="W5", description="one CAT step (select + EAP update), app rules + Sympson-Hetter, 1,500 items (mean)",
                 seconds_median=step_us / 1e6, throughput=1e6 / step_us, throughput_unit="steps/s", peak_rss_mb=0,
                 reference="the 100 µs aim", reference_seconds=1e-4, ratio=step_us / 100, ratio_meaning="time / aim (<= 1 meets it)"))
with open(sys.argv[3], "a") as fh:
    for row in rows: fh.write(json.dumps(row) + "\n")
PY
fi

if want W5; then
echo '{"min_items": 8, "max_items": 25, "se_target": 0.30, "min_per_domain": 1, "randomesque": 5, "exposure_target": 0.25}' > "$out/w5_cat.json"
"$bin/iqscore" simulate --model 2pl --items 1500 --persons 1 --domains pattern,logic,spatial,math,verbal,memory --slope-mean-log 0.3 \
    --bank-out "$out/w5_bank.csv" --out /dev/null --seed 7 2>/dev/null
times=(); peak=0
for k in 1 2 3; do
    t0=$(date +%s.%N)
    /usr/bin/time -v "$bin/iqscore" cat simulate --bank "$out/w5_bank.csv" --config "$out/w5_cat.json" --simulees 10000 --seed 7 --out "$out/w5_report.json" 2> "$out/w5_$k.log"
    t1=$(date +%s.%N); times+=("$("$py" -c "print($t1-$t0)")")
    r=$(rss "$out/w5_$k.log"); [ "$r" -gt "$peak" ] && peak=$r
done
med=$(median "${times[@]}")
row workload W5-study description '"CAT study: 10,000 simulees incl. Sympson-Hetter calibration (whole command)"' seconds_median "$med" \
    throughput "$("$py" -c "print(10000/$med)")" throughput_unit '"simulees/s"' peak_rss_mb "$peak" reference '"none (no peer runs CAT studies here)"' \
    reference_seconds null ratio null share_se_reached "$(field "$out/w5_report.json" share_se_reached)" max_exposure "$(field "$out/w5_report.json" max_exposure)"
fi

"$py" - "$rows" "$json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
json.dump(rows, open(sys.argv[2], "w"), indent=2)
def f(x, d=2):
    return "–" if x is None else (f"{x:,.{d}f}" if isinstance(x, float) else str(x))
print("| workload | what | seconds (median) | throughput | peak RSS | reference | reference s | ratio |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    sec = r["seconds_median"]
    print(f"| {r['workload']} | {r['description']} | {sec:.6g} | {r['throughput']:,.0f} {r['throughput_unit']} | "
          f"{r['peak_rss_mb'] or '–'} MB | {r['reference']} | {f(r['reference_seconds'], 4)} | "
          f"{f(r['ratio'], 2)} ({r.get('ratio_meaning', '')}) |")
print("wrote", sys.argv[2])
PY

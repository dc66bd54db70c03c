#!/usr/bin/env bash
# Looks at `iqscore report` in a real browser: builds the ICAR16 report and a 1,500-item bank report (six domains,
# sparse 25-item sessions, one planted misfitting item), prints their sizes and times, and takes headless Chromium
# screenshots: whole pages under out/report/, and four views (a few sections each) under docs/ for the README.
#
# The planted item: i0007's responses are redrawn from P(θ) = σ(2(θ + 1)) · (1 − 0.7 σ(3(θ − 1))), which rises to
# ≈ 0.95 at θ = 0.5 and falls to ≈ 0.4 at θ = 2.5 (an item that able persons get wrong); no 2PL curve follows it.
#
# Needs: chromium (Debian: apt-get install chromium); for the docs/ views also ImageMagick (convert) and pngquant.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product iqscore 2>&1 | tail -1
bin=.build/release/iqscore
out=out/report
mkdir -p "$out" docs
command -v chromium >/dev/null || { echo "chromium not found (apt-get install chromium)" >&2; exit 1; }

seconds() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f s", b - a }'; }
size() { awk -v n="$(wc -c < "$1")" 'BEGIN { printf "%.0f KB", n / 1024 }'; }

# ICAR16: the shipped responses, a 2PL bank with the items' domains.
"$bin" calibrate Data/icar16.csv --model 2pl --items Data/icar16_items.csv --out "$out/icar16_bank.csv" 2>/dev/null
t=$(seconds)
"$bin" report Data/icar16.csv --bank "$out/icar16_bank.csv" --out "$out/icar16.html" --title "ICAR16 (2PL)"
echo "ICAR16 report: $(size "$out/icar16.html") in $(elapsed "$t")" >&2

# The 1,500-item bank: 60,000 sessions of 25 items, i0007 replaced, calibrated with the domains.
"$bin" simulate --model 2pl --items 1500 --items-per-session 25 --persons 60000 \
    --domains pattern,logic,spatial,math,verbal,memory --layout long \
    --out "$out/bank1500_clean.csv" --bank-out "$out/bank1500_true.csv" --thetas-out "$out/bank1500_thetas.csv" --seed 7 2>/dev/null
awk -F, 'BEGIN { OFS = ","; srand(11) }
     NR == FNR { if (FNR > 1) theta[$1] = $2; next }
     FNR == 1 { print; next }
     $2 == "i0007" { t = theta[$1]; p = 1 / (1 + exp(-2 * (t + 1))) * (1 - 0.7 / (1 + exp(-3 * (t - 1)))); $3 = (rand() < p) ? 1 : 0 }
     { print }' "$out/bank1500_thetas.csv" "$out/bank1500_clean.csv" > "$out/bank1500_responses.csv"
cut -d, -f1,12 "$out/bank1500_true.csv" > "$out/bank1500_domains.csv"
"$bin" calibrate "$out/bank1500_responses.csv" --model 2pl --items "$out/bank1500_domains.csv" --out "$out/bank1500_bank.csv" 2>/dev/null
t=$(seconds)
"$bin" report "$out/bank1500_responses.csv" --bank "$out/bank1500_bank.csv" --out "$out/bank1500.html" --title "Simulated 1,500-item bank (2PL, 60,000 sessions of 25 items)"
echo "1,500-item report: $(size "$out/bank1500.html") in $(elapsed "$t")" >&2

shot() {   # PNG, window height, HTML file
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,"$2" \
        --screenshot="$1" "file://$PWD/$3" >/dev/null 2>&1
}
# Whole pages in a 1280 × 16000 window (ImageMagick's default pixel limit is 16K; the empty bottom is cut off when it
# is there). The 1,500-item page is longer: this shows it down to the start of the item table.
for name in icar16 bank1500; do
    t=$(seconds)
    shot "$out/$name-full.png" 16000 "$out/$name.html"
    echo "screenshot $out/$name-full.png in $(elapsed "$t")" >&2
    if command -v convert >/dev/null; then convert "$out/$name-full.png" -trim +repage -bordercolor white -border 16 "$out/$name-full.png" || true; fi
done

# Views for the README: the page's head and style, then the sections named ("top" is the title and summary, the
# others are <h2 id>s), keeping only the item panels named (all when none are).
view() {   # HTML in, HTML out, section names (space-separated), panel ids (space-separated, or "")
    awk -v sections=" $3 " -v keep=" $4 " '
        !body { print; if (index($0, "<body>")) { body = 1; on = index(sections, " top ") > 0 }; next }
        /^<h2 id="/ { id = $0; sub(/^<h2 id="/, "", id); sub(/".*/, "", id); on = index(sections, " " id " ") > 0 }
        on && /^<figure id="item-/ {
            id = $0; sub(/^<figure id="item-/, "", id); sub(/".*/, "", id)
            skip = keep != "  " && index(keep, " " id " ") == 0
        }
        on && skip { if (index($0, "</figure>")) skip = 0; next }
        on { print }
        END { print "</body></html>" }' "$1" > "$2"
}
if command -v convert >/dev/null && command -v pngquant >/dev/null; then
    view "$out/icar16.html" "$out/view-icar16.html" "top information curves" ""
    view "$out/icar16.html" "$out/view-icar16-items.html" items "reason.4 letter.7 matrix.55 rotate.3 rotate.4 rotate.8"
    view "$out/bank1500.html" "$out/view-bank1500.html" "top information curves" ""
    first=$(grep -o '^<figure id="item-[^"]*' "$out/bank1500.html" | head -6 | sed 's/^<figure id="item-//' | tr '\n' ' ')
    view "$out/bank1500.html" "$out/view-bank1500-items.html" items "$first"
    for name in icar16 icar16-items bank1500 bank1500-items; do
        shot "$out/view-$name.png" 3000 "$out/view-$name.html"
        convert "$out/view-$name.png" -trim +repage -bordercolor white -border 12 "$out/view-$name.png"
        pngquant --force --quality 60-90 --output "docs/report-$name.png" "$out/view-$name.png"
        echo "docs/report-$name.png: $(size "docs/report-$name.png")" >&2
    done
fi

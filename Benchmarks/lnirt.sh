#!/usr/bin/env bash
# The speed-accuracy model against LNIRT 0.5.1 (Fox, Klotzke & Klein Entink; the field's reference, MCMC) on one
# shared simulated data set (issue 30): `iqscore simulate --times` (2PL, 30 items, 2,000 persons, speed SD 0.35,
# ability-speed correlation 0.5, wide: item q's seconds in q_time), calibrated by `calibrate --time-suffix _time`
# and by LNIRT(td = FALSE, 3,000 iterations, 20% burn-in; its IRT half is the normal ogive, so only the time and
# population parameters are compared). With CREDENTIAL=1 also the credential exam that ships with LNIRT (1,636 x 170,
# real data; LNIRT takes about 5 minutes).
# Needs LNIRT in R_LIBS (default /work/Rlib): fetch github:cran/LNIRT, `git archive 0.5.1 | tar x`, then
# `R CMD INSTALL -l /work/Rlib LNIRT` (it is pure R; ../shared/NOTES.md builds mirt the same way).
#   bash Benchmarks/lnirt.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-out/lnirt; mkdir -p "$out"
swift build -c release --product iqscore 2>&1 | tail -1
bin=$PWD/.build/release/iqscore
export R_LIBS=${R_LIBS:-/work/Rlib}
"$bin" simulate --model 2pl --items 30 --persons 2000 --times --speed-sd 0.35 --speed-correlation 0.5 --layout wide --seed 11 \
    --out "$out/sim.csv" --bank-out "$out/truth.csv"
start=$(date +%s.%N)
"$bin" calibrate "$out/sim.csv" --time-suffix _time --model 2pl --out "$out/ours.csv"
echo "iqscore calibrate: $(echo "$(date +%s.%N) - $start" | bc) s"
(cd "$out" && Rscript "$OLDPWD/Benchmarks/lnirt/simulated.R" 2>/dev/null | grep -v '|')
if [ "${CREDENTIAL:-0}" = 1 ]; then
    (cd "$out" && Rscript "$OLDPWD/Benchmarks/lnirt/credential.R" export 2>/dev/null)
    "$bin" calibrate "$out/credential_long.csv" --time-column seconds --model 2pl --out "$out/credential_bank.csv"
    (cd "$out" && Rscript "$OLDPWD/Benchmarks/lnirt/credential.R" fit 2>/dev/null | grep -v '|')
fi

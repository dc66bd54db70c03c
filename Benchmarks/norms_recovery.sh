#!/usr/bin/env bash
# Recovery study of norming (issue #14): norms built from seeded, non-representative samples of a known
# population (NormingRecoveryPopulation: θ mean rising and falling over ages 16–90, SD and skew changing with age,
# education shifting θ; young and educated persons over-sampled), compared with the population's true IQ over
# ages 17–89 (step 2) × true IQ 60–140 (step 5). RMS and largest IQ error with and without raking, continuous vs
# bands, at n = 2,000 / 5,000 / 20,000 (5 replications each), then the smallest n for RMS ≤ 1.5.
#
#   bash Benchmarks/norms_recovery.sh [--quick]     # --quick: 2 replications
#
# Output: a Markdown table on stdout (also written to bench-out/norms_recovery.md).
set -euo pipefail
cd "$(dirname "$0")/.."
replications=5
[ "${1:-}" = "--quick" ] && replications=2
scratch=${SCRATCH:-.build}
mkdir -p bench-out
swift build -c release --scratch-path "$scratch" --product norms-recovery 2>&1 | tail -1
"$scratch/release/norms-recovery" --replications "$replications" | tee bench-out/norms_recovery.md

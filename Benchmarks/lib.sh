# The shared prologue of the benchmarks that time the release iqscore against mirt (sourced, after `set -euo
# pipefail`): run from the repository root, outputs under bench-out/, the release binary built and in $bin, R's
# library with mirt 1.47 in $rlib (R_LIBS, default /work/Rlib, as ../shared/NOTES.md builds it).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=bench-out; mkdir -p "$out"
swift build -c release --product iqscore 2>&1 | tail -1
bin=.build/release/iqscore
rlib=${R_LIBS:-/work/Rlib}

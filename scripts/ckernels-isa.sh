#!/usr/bin/env bash
# The C kernels (Sources/CKernels) promise the same bits from each instruction set's version: builds them for
# SSE2, AVX2, AVX2+FMA and AVX-512 (whichever this CPU can run) with the harness built once without contraction,
# runs each on the same seeded inputs and compares the hashes of all their outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
cc=$(dirname "$(command -v swift)")/clang; [ -x "$cc" ] || cc=clang
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
inc=Sources/CKernels/include
"$cc" -O2 -ffp-contract=off -I"$inc" -c scripts/ckernels/harness.c -o "$work/harness.o"
flags=("" "-mavx2" "-mavx2 -mfma" "-mavx512f"); cpu=(sse2 avx2 "avx2 fma" avx512f)
reference=""
for i in "${!flags[@]}"; do
    runs=1; for f in ${cpu[$i]}; do grep -qw "$f" /proc/cpuinfo || runs=0; done
    [ "$runs" = 1 ] || { echo "skipped ${cpu[$i]}: this CPU lacks it"; continue; }
    # -U__clang__ leaves out target_clones: the flags alone choose the instruction set.
    "$cc" -O2 ${flags[$i]} -U__clang__ -I"$inc" -c Sources/CKernels/Kernels.c -o "$work/k.o" 2>/dev/null
    "$cc" "$work/k.o" "$work/harness.o" -o "$work/h" -lm
    out=$("$work/h"); echo "${cpu[$i]}: $out"
    if [ -z "$reference" ]; then reference=$out
    elif [ "$out" != "$reference" ]; then echo "CKernels: ${cpu[$i]} differs from ${cpu[0]}" >&2; exit 1; fi
done
echo "CKernels: the same bits from every instruction set built"

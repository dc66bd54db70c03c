#!/usr/bin/env bash
# The correlated-factors workload of issue 28 beyond the product grid: PERSONS dense sessions x ITEMS 2PL items on
# K correlated factors (items assigned round-robin, every true correlation 0.6), drawn by `iqscore simulate --model
# correlated --seed 606`, fitted by `iqscore calibrate --model correlated --no-se --threads 1` (adaptive quasi-Monte
# Carlo from 4 factors, 1,024 nodes per person; fit time from its summary) and by mirt 1.47
# `mirt(d, model, method = "QMCEM", SE = FALSE)` single-threaded (its quasi-Monte Carlo EM at its defaults: 5,000
# Halton points, not adapted; timed around the call). Thread for thread, one thread each. Each side's
# log-likelihood is its own integration's estimate (not comparable to the digit); the correlations' range is
# printed beside the truth. Needs mirt 1.47 as ../shared/NOTES.md says (R_LIBS=/work/Rlib).
#   bash Benchmarks/correlated.sh [PERSONS ITEMS K]
set -euo pipefail
persons=${1:-5000}; items=${2:-36}; k=${3:-6}
source "$(dirname "$0")/lib.sh"
names=$(python3 -c "import sys; print(','.join(['pattern','logic','spatial','math','verbal','memory','f7','f8','f9','f10','f11','f12'][:int(sys.argv[1])]))" "$k")
tag=correlated_${persons}_${items}x${k}
data=$out/$tag.csv; truth=$out/${tag}_truth.csv
[ -s "$data" ] || "$bin" simulate --model correlated --domains "$names" --items "$items" --persons "$persons" --seed 606 \
    --out "$data" --bank-out "$truth" 2>/dev/null
"$bin" calibrate "$data" --items "$truth" --model correlated --factor-column domain --no-se --threads 1 \
    --out "$out/${tag}_bank.csv" --summary-json "$out/${tag}_iqscore.json" 2>/dev/null || [ $? -eq 3 ]
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 Rscript - "$data" "$truth" "$rlib" > "$out/${tag}_mirt.json" 2>/dev/null <<'R'
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(mirt, lib.loc = args[3]))
d <- read.csv(args[1], row.names = 1, check.names = FALSE)
f <- read.csv(args[2])$domain
spec <- paste0(unique(f), " = ", sapply(unique(f), function(x) paste(which(f == x), collapse = ",")), collapse = "\n")
model <- mirt.model(paste0(spec, "\nCOV = ", paste(unique(f), collapse = "*")))
t0 <- proc.time()
m <- mirt(d, model, method = "QMCEM", SE = FALSE, verbose = FALSE)
s <- (proc.time() - t0)[["elapsed"]]
r <- cov2cor(coef(m, simplify = TRUE)$cov); r <- r[lower.tri(r)]
cat(sprintf('{"seconds": %.3f, "cycles": %d, "log_likelihood": %.6f, "converged": %s, "r_min": %.4f, "r_max": %.4f}\n', s,
            extract.mirt(m, "iterations"), logLik(m), tolower(extract.mirt(m, "converged")), min(r), max(r)))
R
python3 - "$out/${tag}_iqscore.json" "$out/${tag}_mirt.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1])); mirt = json.loads(open(sys.argv[2]).read())
r = [v for i, row in enumerate(ours["correlations"]) for j, v in enumerate(row) if j < i]
print(f'iqscore {ours["fit_seconds"]:.2f} s ({ours["integration"]} {ours["nodes"]}, {ours["cycles"]} cycles, logLik {ours["log_likelihood"]:.3f}, '
      f'converged {ours["converged"]}, correlations {min(r):.3f}..{max(r):.3f}) | mirt QMCEM {mirt["seconds"]:.2f} s ({mirt["cycles"]} cycles, '
      f'logLik {mirt["log_likelihood"]:.3f}, converged {mirt["converged"]}, correlations {mirt["r_min"]:.3f}..{mirt["r_max"]:.3f}) | '
      f'ratio {mirt["seconds"] / ours["fit_seconds"]:.1f}x; true correlations 0.6')
PY

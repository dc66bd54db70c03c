#!/usr/bin/env bash
# The DIF workload of issue 29, thread for thread against mirt 1.47 (single-threaded; iqscore --threads 1):
#  dense:  PERSONS persons (half reference N(0, 1), half focal N(-0.5, 1)) x ITEMS 2PL items, 10% of them with DIF
#          (uniform, b + 0.5 for the focal group); the multiple-group fit with every item invariant (mirt
#          multipleGroup(invariance = c(items, "free_means", "free_var")), SE = FALSE; iqscore calibrate
#          --group-column --no-se) and the full IRT likelihood-ratio DIF scan (mirt DIF(fit, c("a1", "d"),
#          scheme = "drop"): one refit per item; iqscore dif --methods irt: one refit per item, warm-started).
#  sparse: SESSIONS sessions of 25 items from a BANK-item bank (default 20,000 x 1,500; two groups as above):
#          the multiple-group fit by both, iqscore's full scan, and mirt's DIF() on the first MIRT_ITEMS items
#          (default 3) with its time per item.
# Both at their defaults: 61 quadrature points on [-6, 6], TOL 1e-4; the log-likelihoods and the statistics
# are compared beside the times. iqscore's dense runs are repeated RUNS times (default 3) and the median run is
# reported (this machine is shared and noisy); mirt, at 40 s and more, runs once. Needs mirt 1.47 as ../shared/NOTES.md says (R_LIBS=/work/Rlib). The data are
# drawn in R (set.seed(29)). SKIP_SPARSE=1 runs the dense workload only; SKIP_MIRT_SPARSE_FIT=1 skips mirt's
# sparse multiple-group fit.
#   bash Benchmarks/dif.sh [PERSONS ITEMS [SESSIONS BANK]]
set -euo pipefail
persons=${1:-4500}; items=${2:-30}; sessions=${3:-20000}; bankitems=${4:-1500}
source "$(dirname "$0")/lib.sh"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

simulate() { # $1 persons  $2 items  $3 per-session items (0 = all)  $4 file
    Rscript - "$1" "$2" "$3" "$4" <<'R'
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[1]); J <- as.integer(args[2]); k <- as.integer(args[3])
set.seed(29)
a <- runif(J, 0.8, 2); b <- rnorm(J); dif <- seq_len(J) %% 10 == 1
group <- rep(c("ref", "foc"), length.out = n)
theta <- ifelse(group == "ref", rnorm(n), rnorm(n, -0.5, 1))
bf <- b + ifelse(dif, 0.5, 0)
bb <- matrix(rep(b, each = n), n, J); bb[group == "foc", ] <- matrix(rep(bf, each = sum(group == "foc")), ncol = J)
x <- matrix(as.integer(runif(n * J) < plogis(rep(a, each = n) * (theta - bb))), n, J)
if (k > 0) { for (i in seq_len(n)) x[i, -sample.int(J, k)] <- NA }
colnames(x) <- sprintf("i%04d", seq_len(J))
write.csv(data.frame(person = sprintf("p%06d", seq_len(n)), group = group, x), args[4], row.names = FALSE, na = "", quote = FALSE)
R
}

mirt_run() { # $1 data  $2 what (fit | dif)  $3 items to test (dif)
    Rscript - "$1" "$2" "${3:-0}" "$rlib" <<'R'
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(mirt, lib.loc = args[4]))
d <- read.csv(args[1]); group <- factor(d$group, levels = c("ref", "foc")); x <- d[, -(1:2)]
t0 <- proc.time()
fit <- multipleGroup(x, 1, group, invariance = c(colnames(x), "free_means", "free_var"), SE = FALSE, verbose = FALSE)
s <- (proc.time() - t0)[["elapsed"]]
cat(sprintf('{"fit_seconds": %.3f, "log_likelihood": %.6f, "cycles": %d', s, logLik(fit), extract.mirt(fit, "iterations")))
if (args[2] == "dif") {
  k <- as.integer(args[3]); which <- if (k > 0) seq_len(k) else seq_len(ncol(x))
  t0 <- proc.time()
  r <- DIF(fit, c("a1", "d"), scheme = "drop", items2test = which, verbose = FALSE)
  s <- (proc.time() - t0)[["elapsed"]]
  cat(sprintf(', "dif_seconds": %.3f, "items_tested": %d, "x2": [%s]', s, length(which), paste(sprintf("%.4f", r$X2), collapse = ", ")))
}
cat("}\n")
R
}

report() { # $1 label  $2 iqscore fit json  $3 iqscore dif json  $4 dif csv  $5 mirt json
    python3 - "$@" <<'PY'
import csv, json, sys
label, fitj, difj, difcsv, mirtj = sys.argv[1:6]
fit = json.load(open(fitj)); dif = json.load(open(difj)); mirt = json.loads(open(mirtj).read())
print(f'{label}: multiple-group fit iqscore {fit["fit_seconds"]:.2f} s (logLik {fit["log_likelihood"]:.4f}, {fit["cycles"]} cycles) | '
      f'mirt {mirt["fit_seconds"]:.2f} s (logLik {mirt["log_likelihood"]:.4f}, {mirt["cycles"]} cycles) | ratio {mirt["fit_seconds"] / fit["fit_seconds"]:.1f}x, '
      f'logLik difference {fit["log_likelihood"] - mirt["log_likelihood"]:+.4f}')
scan = dif["seconds"]["irt"]
rows = list(csv.DictReader(open(difcsv)))
print(f'{label}: IRT-LR scan of {len(rows)} items iqscore {scan:.2f} s ({dif["multiple_group_fits"]} multiple-group fits, {len(dif["flagged"]["irt"])} flagged)', end='')
if "dif_seconds" in mirt:
    k = mirt["items_tested"]; per = mirt["dif_seconds"] / k
    ours = [float(r["irt_chi2"]) if r["irt_chi2"] else float("nan") for r in rows[:k]]
    diff = max(abs(a - b) for a, b in zip(ours, mirt["x2"]))
    whole = (mirt["fit_seconds"] + per * len(rows))
    kind = "measured" if k == len(rows) else f"{k} items measured, {per:.2f} s each, extrapolated to {len(rows)}"
    print(f' | mirt fit + DIF() {whole:.2f} s ({kind}) | ratio {whole / scan:.1f}x | largest |G2 difference| over the items mirt tested {diff:.4f}')
else:
    print()
PY
}

tag=dif_${persons}x${items}; data=$out/$tag.csv
[ -s "$data" ] || simulate "$persons" "$items" 0 "$data"
median_run() { # $1 json key path (fit_seconds | seconds.irt)  $2.. the command, writing --summary-json "$out/${tag}_run_K.json"
    local key=$1; shift
    for k in $(seq 1 "${RUNS:-3}"); do "$@" --summary-json "$out/${tag}_run_$k.json" 2>/dev/null; done
    python3 - "$key" "$out/${tag}_run_"*.json <<'PY'
import json, sys, shutil
key = sys.argv[1].split(".")
def value(path):
    v = json.load(open(path))
    for k in key: v = v[k]
    return v
runs = sorted(sys.argv[2:], key=value)
print(runs[len(runs) // 2])
PY
}
run=$(median_run fit_seconds "$bin" calibrate "$data" --group-column group --reference ref --no-se --threads 1 --out "$out/${tag}_bank.csv")
cp "$run" "$out/${tag}_fit.json"; rm -f "$out/${tag}_run_"*.json
run=$(median_run seconds.irt "$bin" dif "$data" --group-column group --reference ref --methods irt --dtf-draws 0 --threads 1 --out "$out/${tag}_dif.csv")
cp "$run" "$out/${tag}_dif.json"; rm -f "$out/${tag}_run_"*.json
mirt_run "$data" dif 0 > "$out/${tag}_mirt.json" 2>/dev/null
report "dense $persons x $items" "$out/${tag}_fit.json" "$out/${tag}_dif.json" "$out/${tag}_dif.csv" "$out/${tag}_mirt.json"

[ "${SKIP_SPARSE:-0}" = 1 ] && exit 0
tag=dif_sparse_${sessions}x${bankitems}; data=$out/$tag.csv
[ -s "$data" ] || simulate "$sessions" "$bankitems" 25 "$data"
"$bin" calibrate "$data" --group-column group --reference ref --no-se --threads 1 --out "$out/${tag}_bank.csv" --summary-json "$out/${tag}_fit.json" 2>/dev/null
"$bin" dif "$data" --group-column group --reference ref --methods irt --dtf-draws 0 --threads 1 --out "$out/${tag}_dif.csv" --summary-json "$out/${tag}_dif.json" 2>/dev/null
if [ "${SKIP_MIRT_SPARSE_FIT:-0}" = 1 ]; then echo '{"fit_seconds": NaN, "log_likelihood": NaN, "cycles": 0}' > "$out/${tag}_mirt.json"
else mirt_run "$data" dif "${MIRT_ITEMS:-3}" > "$out/${tag}_mirt.json" 2>/dev/null; fi
report "sparse $sessions x $bankitems" "$out/${tag}_fit.json" "$out/${tag}_dif.json" "$out/${tag}_dif.csv" "$out/${tag}_mirt.json"

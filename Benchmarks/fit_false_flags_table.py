"""The table of Benchmarks/fit_false_flags.sh: false-flag rates per design and statistic.

    python3 Benchmarks/fit_false_flags_table.py INDEX.tsv OUT.json TRUE_PARAMETERS(0/1)

INDEX.tsv lines: design, analyze milliseconds, summary JSON path (its ITEMS.csv beside it as .items.csv; a
baseline run's as .baseline.json / .baseline.items.csv). Counts come from the summary's "fit_flags"; the parts
of the combined rules and the baseline from the ITEMS.csv columns and flags.
"""
import csv
import json
import os
import sys

index, target, truth = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
designs = {}


def tally(d, stat, tested, flagged):
    acc = d["stats"].setdefault(stat, {"tested": 0, "flagged": 0})
    acc["tested"] += tested
    acc["flagged"] += flagged


for line in open(index):
    design, ms, path = line.rstrip("\n").split("\t")
    summary = json.load(open(path))
    d = designs.setdefault(design, {"replications": 0, "analyze_seconds": [], "stats": {}})
    d["replications"] += 1
    d["analyze_seconds"].append(float(ms) / 1000)
    for stat, v in summary["fit_flags"].items():
        tally(d, stat, v["tested"], v["flagged"])
    # Each part of the combined rules alone, from ITEMS.csv.
    rows = list(csv.DictReader(open(path[: -len(".json")] + ".items.csv")))

    def count(test, column):
        values = [r for r in rows if r[column] != ""]
        return len(values), sum(1 for r in values if test(r))

    tally(d, "infit_z_alone", *count(lambda r: abs(float(r["infit_z"])) > 2.5758, "infit_z"))
    tally(d, "outfit_z_alone", *count(lambda r: abs(float(r["outfit_z"])) > 2.5758, "outfit_z"))
    tally(d, "mnsq_range_alone", *count(lambda r: not (0.7 <= float(r["infit"]) <= 1.3 and 0.7 <= float(r["outfit"]) <= 1.3), "outfit"))
    tally(d, "rmsd_cutoff_alone", *count(lambda r: float(r["rmsd"]) > 0.1, "rmsd"))
    baseline = path[: -len(".json")] + ".baseline.json"
    if os.path.exists(baseline):
        old = json.load(open(baseline))
        rows = list(csv.DictReader(open(baseline[: -len(".json")] + ".items.csv")))
        tally(d, "baseline_sx2", sum(1 for r in rows if r["sx2_p"] != ""), sum(1 for r in rows if "misfit (S-X²" in r["flags"]))
        tally(d, "baseline_mnsq", sum(1 for r in rows if r["infit"] != ""), sum(1 for r in rows if "infit/outfit outside" in r["flags"]))
        tally(d, "baseline_q3", 0, len(old["q3_flagged_pairs"]))
        tally(d, "baseline_lz", old["n_persons"], old["persons_lz_below_minus_1_96"])

rows = [("sx2", "S-X² p < 0.01", "items", "1%"),
        ("infit", "infit: outside 0.7–1.3 and abs(ZSTD) > 2.58", "items", "≤ 1%"),
        ("outfit", "outfit: outside 0.7–1.3 and abs(ZSTD) > 2.58", "items", "≤ 1%"),
        ("infit_z_alone", "(infit abs(ZSTD) > 2.58 alone)", "items", "1%"),
        ("outfit_z_alone", "(outfit abs(ZSTD) > 2.58 alone)", "items", "1%"),
        ("mnsq_range_alone", "(infit or outfit outside 0.7–1.3 alone)", "items", "–"),
        ("rmsd", "RMSD > 0.1 and > rmsd_critical", "items", "≤ 1%"),
        ("rmsd_cutoff_alone", "(RMSD > 0.1 alone)", "items", "–"),
        ("q3_pairs", "Q3 pairs: Q3* > 0.2 and z > Bonferroni", "pairs", "0.01 per analysis"),
        ("lz", "l_z < −1.96", "persons", "2.5%"),
        ("lz_star", "l_z* < −1.96", "persons", "2.5%"),
        ("baseline_sx2", "before: S-X² p < 0.01", "items", "1%"),
        ("baseline_mnsq", "before: infit/outfit outside 0.7–1.3", "items", "–"),
        ("baseline_q3", "before: Q3 pairs > 0.2 above the mean", "pairs", "–"),
        ("baseline_lz", "before: l_z < −1.96", "persons", "2.5%")]
print(f"False flags on data simulated from the model ({'true' if truth else 'calibrated'} parameters)\n")
print("| design | statistic | tested | flagged | false-flag rate | nominal | flags per replication |")
print("|---|---|---|---|---|---|---|")
for design, d in designs.items():
    for key, name, unit, nominal in rows:
        if key not in d["stats"]:
            continue
        a = d["stats"][key]
        rate = "–" if not a["tested"] else f"{100 * a['flagged'] / a['tested']:.{4 if unit == 'pairs' else 2}f}%"
        tested = f"{a['tested']:,} {unit}" if a["tested"] or not key.startswith("baseline") else "–"
        print(f"| {design} ×{d['replications']} | {name} | {tested} | {a['flagged']:,} | {rate} | {nominal} | {a['flagged'] / d['replications']:.2f} |")
print()
for design, d in designs.items():
    t = sorted(d["analyze_seconds"])
    print(f"{design}: analyze {t[len(t) // 2]:.2f} s (median of {len(t)})")
json.dump(designs, open(target, "w"), indent=1)

#!/usr/bin/env bash
# What a consumer's code would break: `swift package diagnose-api-breaking-changes` against the commit in
# .ci/api-baseline, keeping only breakages of public declarations. swift-api-digester also compares `package`
# declarations (it reported `CSVReader.init(bytes:name:delimiter:)`, package access, as removed), and it does not
# see public → package; so a breakage counts when its declaration is in the baseline's docs/public-api.txt, and
# `public-surface.sh --check` covers the rest. Exit 1 on a public breakage, or when the digester fails without
# reporting any. Moving the baseline on purpose: point .ci/api-baseline at the breaking commit (a later commit).
set -uo pipefail
cd "$(dirname "$0")/.."
base=$(cat .ci/api-baseline)
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
    echo "API breakage check: the baseline commit $base is not in this clone (a shallow clone?); docs/public-api.txt was checked by public-surface.sh --check" >&2
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift package diagnose-api-breaking-changes "$base" > "$work/digester.log" 2>&1
status=$?
grep -E 'breaking changes detected|API breakage' "$work/digester.log"
git show "$base:docs/public-api.txt" > "$work/public-api.txt" || exit 1
python3 - "$status" "$work/public-api.txt" "$work/digester.log" <<'PY'
import re, sys
status, listing, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
public = set()
for line in open(listing, encoding="utf-8"):
    fields = line.rstrip("\n").split("\t")
    if len(fields) >= 2:
        public.add(fields[1])
bases = {p.split("(")[0] for p in public}
breakages = [l for l in open(log, encoding="utf-8", errors="replace").read().splitlines() if "API breakage:" in l]
def name(message):
    words = message.split("API breakage:", 1)[1].split()
    for w in words:                      # skip the declaration kind ("func", "constructor", "static var" …)
        if w[:1].isupper() or "." in w:
            return w
    return ""
failures = []
for b in breakages:
    n = name(b)
    n = re.sub(r"\.(Get|Set|Modify|Read)\(\)$", "", n)
    if n in public or n.split("(")[0] in bases:
        failures.append(b.strip())
        print(f"PUBLIC: {b.strip()}")
    else:
        print(f"package only, not a consumer's break: {b.strip()}")
if failures:
    sys.exit(1)
if status != 0 and not breakages:
    print("diagnose-api-breaking-changes failed without reporting a breakage", file=sys.stderr)
    sys.exit(1)
print(f"no breakage of the public API since the baseline ({len(breakages)} package-level change(s) ignored)")
PY

#!/usr/bin/env bash
# Counts each library module's Swift lines and public API (from the compiler's symbol graph; issues 11 and 31:
# count before and after). Every library module is counted, Norming, Fairness and Integrity included, and
# InputSupport (not a product; Psychometrics re-exports its public types).
#   bash scripts/public-surface.sh [--list|--check]
#     --list: every public symbol, one per line
#     --check: fails (exit 1) naming each public top-level symbol that its module's DocC catalog does not curate
#              (a line `- ``Name``` under `## Topics` in Sources/<Module>/<Module>.docc/*.md; a mention in the
#              prose does not count), each public throwing declaration (extensions of other modules' types
#              included) whose doc comment has no `- Throws:`, and each public symbol added to or removed from
#              docs/public-api.txt (the committed list: a change to the public API is made on purpose, by rewriting it with
#              `bash scripts/public-surface.sh --list > docs/public-api.txt`). CI runs it. It complements
#              `swift package diagnose-api-breaking-changes`, whose digester does not see a symbol that went from
#              public to package.
# Declared = written in our sources; synthesized = conformance members the compiler adds (==, hash(into:),
# init(from:), rawValue, …), which the symbol graph lists without a source location.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-symbol-graph --minimum-access-level public >/dev/null 2>&1 || true   # test modules may fail to load; the libraries' graphs are written first
dir=$(find .build -type d -path '*symbolgraph' | head -1)
python3 - "$dir" "${1:-}" <<'PY'
import collections, glob, json, os, re, sys
directory, mode = sys.argv[1], sys.argv[2]
modules = ["Psychometrics", "InputSupport", "Assembly", "Norming", "Fairness", "Integrity", "PsychometricsIO", "IQScoreServer"]
def lines(module):
    total = 0
    for path in glob.glob(os.path.join("Sources", module, "**", "*.swift"), recursive=True):
        with open(path, encoding="utf-8") as f:
            total += sum(1 for _ in f)
    return total
rows = collections.defaultdict(lambda: collections.Counter())
names = []
problems = []   # for --check: uncurated public top-level symbols, throwing declarations without `- Throws:`
for path in sorted(glob.glob(os.path.join(directory, "*.symbols.json"))):
    module = os.path.basename(path).split(".")[0].split("@")[0]
    if module not in modules:
        continue
    # Extensions of other modules' types (`Module@Other.symbols.json`) are curated under the modules they extend;
    # their throwing members (the loaders) are checked for `- Throws:` like any other.
    extending = "@" in os.path.basename(path)
    # Curated: listed under a page's `## Topics` (a mention in the prose does not count).
    topics = [text.split("## Topics", 1)[1] for f in glob.glob(os.path.join("Sources", module, module + ".docc", "*.md"))
              if "## Topics" in (text := open(f, encoding="utf-8").read())]
    curated = set(re.findall(r"^- ``([A-Za-z_][A-Za-z0-9_]*)``", "".join(topics), re.M))
    for symbol in json.load(open(path))["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        declared = "location" in symbol
        row = rows[module]
        row["all"] += 1
        row["declared" if declared else "synthesized"] += 1
        if len(symbol["pathComponents"]) == 1:
            row["top-level"] += 1
        name = ".".join(symbol["pathComponents"])
        names.append(f'{module}\t{name}\t{symbol["kind"]["identifier"].removeprefix("swift.")}' + ("" if declared else "\tsynthesized"))
        if not declared:
            continue
        where = f'{symbol["location"]["uri"].split("/Sources/")[-1]}:{symbol["location"]["position"]["line"] + 1}'
        if len(symbol["pathComponents"]) == 1 and name not in curated and not extending:
            problems.append(f"{where}: {module}.{name} is public but not curated in Sources/{module}/{module}.docc")
        fragments = symbol.get("declarationFragments", [])
        throwing = any(f["kind"] == "keyword" and f["spelling"] in ("throws", "rethrows") for f in fragments)
        doc = "\n".join(line["text"] for line in (symbol.get("docComment") or {}).get("lines", []))
        if throwing and "- Throws:" not in doc:
            problems.append(f"{where}: {module}.{name} throws but its doc comment has no '- Throws:'")
if mode == "--list":
    print("\n".join(sorted(names)))
    sys.exit()
if mode == "--check":
    committed = collections.Counter(open("docs/public-api.txt", encoding="utf-8").read().splitlines()) if os.path.exists("docs/public-api.txt") else collections.Counter()
    now = collections.Counter(names)
    problems += [f"public now, not in docs/public-api.txt: {n}" for n in sorted((now - committed).elements())]
    problems += [f"in docs/public-api.txt, no longer public: {n}" for n in sorted((committed - now).elements())]
    print("\n".join(problems) if problems else f"{len(names)} public symbols, as docs/public-api.txt lists; every public top-level symbol is curated; every public throwing declaration says what it throws")
    sys.exit(1 if problems else 0)
print(f'{"module":<18}{"lines":>8}{"public":>8}{"declared":>10}{"synthesized":>13}{"top-level":>11}')
total = collections.Counter()
for module in modules:   # a module with no public symbol (package-only: Fairness) is listed with 0
    r = rows[module]
    r["lines"] = lines(module)
    total.update(r)
    print(f'{module:<18}{r["lines"]:>8}{r["all"]:>8}{r["declared"]:>10}{r["synthesized"]:>13}{r["top-level"]:>11}')
print(f'{"total":<18}{total["lines"]:>8}{total["all"]:>8}{total["declared"]:>10}{total["synthesized"]:>13}{total["top-level"]:>11}')
PY

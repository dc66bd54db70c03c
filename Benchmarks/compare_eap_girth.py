#!/usr/bin/env python3
"""Compare iqscore's EAP scores with girth's ability_eap on the same data and the same bank.

    compare_eap_girth.py DATA.csv BANK.csv SCORES.csv

DATA.csv: wide layout (empty = not administered; a first column named session_id/person_id/id is the id,
otherwise rows are numbered 1, 2, ... as iqscore does). BANK.csv: an iqscore bank (2PL: c = 0; girth's EAP has
no c). SCORES.csv: `iqscore score --method eap` output for DATA.csv with BANK.csv. Run with the peers' venv
python. Prints the agreement of the two EAP estimates over the sessions both scored.
"""
import csv, sys
import numpy as np
from girth import ability_eap
from girth.utilities.utils import INVALID_RESPONSE

data_path, bank_path, scores_path = sys.argv[1:4]
with open(data_path) as fh:
    rows = list(csv.reader(fh))
header, body = rows[0], rows[1:]
has_id = header[0].lower() in ("session_id", "person_id", "id", "user_id")
items = header[1:] if has_id else header
ids = [r[0] for r in body] if has_id else [str(k + 1) for k in range(len(body))]
values = [r[1:] if has_id else r for r in body]
bank = {r["item_id"]: r for r in csv.DictReader(open(bank_path))}
a = np.array([float(bank[i]["a"]) for i in items]); b = np.array([float(bank[i]["b"]) for i in items])
assert all(float(bank[i]["c"] or 0) == 0 for i in items), "girth's EAP has no guessing parameter: use a Rasch/1PL/2PL bank"
resp = np.array([[int(v) if v.strip() in ("0", "1") else INVALID_RESPONSE for v in r] for r in values]).T  # items x persons
girth = ability_eap(resp, b, a)
ours = {r["session_id"]: float(r["theta"]) for r in csv.DictReader(open(scores_path))}
pairs = [(ours[i], g) for i, g in zip(ids, girth) if i in ours]
x = np.array(pairs)
d = x[:, 0] - x[:, 1]
print(f"sessions compared: {len(pairs)} (iqscore scored {len(ours)}, data rows {len(ids)})")
print(f"theta difference iqscore - girth: mean {d.mean():+.5f}, mean |d| {np.abs(d).mean():.5f}, max |d| {np.abs(d).max():.5f}")
print(f"correlation {np.corrcoef(x[:, 0], x[:, 1])[0, 1]:.6f}")

#!/usr/bin/env python3
"""girth's ability_eap on the first N sessions of a long CSV (session_id,item_id,response) with a bank's a, b:
the peer reference for scoring. Prints the seconds of ability_eap alone (data loading excluded).

    girth_eap_sessions.py SESSIONS.csv BANK.csv N
"""
import csv, sys, time
import numpy as np
from girth import ability_eap
from girth.utilities.utils import INVALID_RESPONSE

path, bank_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
bank = list(csv.DictReader(open(bank_path)))
index = {r["item_id"]: k for k, r in enumerate(bank)}
a = np.array([float(r["a"]) for r in bank]); b = np.array([float(r["b"]) for r in bank])
sessions, rows = {}, []
with open(path) as fh:
    reader = csv.reader(fh); next(reader)
    for sid, item, resp in reader:
        if sid not in sessions:
            if len(sessions) == n: break
            sessions[sid] = len(sessions)
        rows.append((sessions[sid], index[item], int(resp)))
data = np.full((len(bank), len(sessions)), INVALID_RESPONSE, dtype=int)
for s, j, u in rows: data[j, s] = u
t0 = time.perf_counter()
ability_eap(data, b, a)
print(f"{time.perf_counter() - t0:.4f}")

#!/usr/bin/env python3
"""Marginal log-likelihood of item parameters on dense 0/1 data, computed independently of iqscore.

    marginal_loglik.py DATA.csv PARAMS.csv [--points 61 --bound 6]

DATA.csv: header row of item ids, persons x items, 0/1, no blanks (the girth format).
PARAMS.csv: a bank (item_id,a,b,c,...) or girth's OUT_items.csv (item,a,b,c).
logL = sum_i log sum_q w_q prod_j P_j(theta_q)^u_ij (1 - P_j(theta_q))^(1 - u_ij), with theta_q equally spaced
on [-bound, bound] and w_q proportional to the N(0,1) density (the same rule as iqscore and mirt).
Prints one number.
"""
import argparse, csv
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("data"); ap.add_argument("params")
ap.add_argument("--points", type=int, default=61); ap.add_argument("--bound", type=float, default=6.0)
args = ap.parse_args()
with open(args.data) as fh:
    header = next(csv.reader(fh))
first = header[0].lower()
skip_id = first in ("session_id", "person_id", "id")
u = np.loadtxt(args.data, delimiter=",", skiprows=1, dtype=np.float64, usecols=range(1 if skip_id else 0, len(header)))
items = header[1:] if skip_id else header
rows = {}
with open(args.params) as fh:
    for r in csv.DictReader(fh):
        rows[r.get("item_id", r.get("item"))] = (float(r["a"]), float(r["b"]), float(r.get("c") or 0))
a = np.array([rows[i][0] for i in items]); b = np.array([rows[i][1] for i in items]); c = np.array([rows[i][2] for i in items])
theta = np.linspace(-args.bound, args.bound, args.points)
logw = -0.5 * theta ** 2
logw -= np.log(np.exp(logw).sum())
p = c[None, :] + (1 - c[None, :]) / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))  # Q x J
p = np.clip(p, 1e-300, 1 - 1e-16)
lp, lq = np.log(p), np.log1p(-p)
total = 0.0
for start in range(0, u.shape[0], 20000):
    ub = u[start:start + 20000]
    ll = ub @ (lp - lq).T + lq.sum(axis=1)[None, :] + logw[None, :]
    m = ll.max(axis=1)
    total += float((m + np.log(np.exp(ll - m[:, None]).sum(axis=1))).sum())
print(f"{total:.4f}")

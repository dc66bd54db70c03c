#!/usr/bin/env python3
"""Load benchmark of `iqscore serve` beside the app's Python scoring endpoint (issue 12).

Both servers run on loopback on the same 1,500-item six-domain bank and receive the same request bodies from
`wrk` (Debian package) in the same run, one after the other, so the machine's noise is shared:

  * POST /v1/score (ours) and POST /score (the peer, ../shared/peers/aiq_scoring_server.py, FastAPI + numpy,
    2 uvicorn workers): 25-item sessions drawn from the bank, responses from the 2PL at θ ~ N(0, 1);
  * POST /v1/cat/next at 10 administered items (histories made by our own adaptive steps), and POST /v1/forms
    (the default 25-item blueprint, a seed per request): the peer has no such endpoints, so their reference is
    our GET /healthz in the same run, the cost of HTTP alone on this machine;
  * a soak (default 300 s) on /v1/score with the server's RSS sampled every 10 s.

Each run: 3 s warm-up, then `--seconds` of wrk -t2 -c16 (the peer README's setting) with a Lua script that
cycles through the bodies and prints requests/s, p50/p99/p99.9 and every error wrk counts. `--rounds` rounds run
every endpoint in turn, so the machine's drift over minutes falls on all of them: each figure is the median over
the rounds, each ratio the median of the ratios within a round. Writes OUT/serve_load.json (every round's runs
too) and prints a Markdown table and the issue-25 goals (/v1/score ≥ 8× the peer, ≥ 85% of our /healthz, p99 <
2 ms). Not a timed test: the figures go into the README.

Ours runs as an operator would (issue 25): every connection guarded, a scoring token on every request
(`--tokens`, checked per request), one log line per request at info written to a file (`--log-level info`,
`--log-format json`); `--plain` drops the token and the request lines (`--log-level notice`) to show their cost.
The peer runs as its README says: 2 uvicorn workers on uvicorn[standard] (uvloop + httptools), installed by
../shared/peers/setup.sh.

`--pinned` measures thread for thread with the client off the servers' core, which a 2-core machine otherwise
cannot: both servers on core 0 with one thread of work each (ours: one event loop, NIO_SINGLETON_GROUP_LOOP_COUNT=1;
the peer: one uvicorn worker), wrk -t1 -c16 on core 1. Without it wrk's two threads share both cores with the
servers, and a server thread the scheduler sets aside for wrk leaves its connections waiting a time slice: the p99
then measures the scheduler more than the server.

`--baseline BIN` runs a second build of ours (an earlier commit's binary) on the same files beside this one, and
each round measures /v1/score on both, in alternating order (the second of a pair runs faster on this machine): the
ratio this build / baseline is the median of the within-round ratios, a before/after of a change in one run (issue 31).

`--times` (issue 30) measures the cost of response times instead: the bank is simulated with a response-time model
(`simulate --times`) and each round runs our /v1/score on the same 2,000 sessions without and with their 25
`seconds` (lognormal times from the bank's model at each person's speed), and /healthz; the ratio with/without
is the median of the within-round ratios. No peer.

    python3 Benchmarks/serve_load.py --bin .build/release/iqscore --out bench-out [--seconds 10] [--rounds 3] [--soak 300] [--plain] [--pinned] [--baseline OLD-BIN]
    python3 Benchmarks/serve_load.py --times --soak 0 [--pinned]
"""
import argparse, json, math, os, random, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DOMAINS = ["pattern", "logic", "spatial", "math", "verbal", "memory"]

LUA = r"""
local bodies = dofile("%(bodies)s")
local counter = 0
local path = "%(path)s"
setup = function(thread) thread:set("offset", counter); counter = counter + 1 end
init = function(args) i = offset * 7919 end
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", path, {["Content-Type"] = "application/json"%(auth)s}, bodies[i])
end
%(done)s
"""
LUA_GET = r"""
local path = "%(path)s"
request = function() return wrk.format("GET", path%(auth)s) end
%(done)s
"""
DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests": %d, "seconds": %.3f, "rps": %.1f, "p50_ms": %.3f, "p99_ms": %.3f, "p999_ms": %.3f, "max_ms": %.3f, "errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000,
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server on port {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port} after {seconds} s")


TOKEN = "bench-scoring-token-0123456789abcdef"


def post(port, path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read())


def lua_bodies(path, bodies):
    with open(path, "w") as fh:
        fh.write("return {\n")
        for b in bodies:
            fh.write("  " + json.dumps(json.dumps(b, separators=(",", ":"))) + ",\n")  # a JSON string is a Lua string
        fh.write("}\n")


# --pinned: the servers on core 0, the client on core 1 (see the module's doc).
SERVER_CORE, CLIENT_CORE = ["taskset", "-c", "0"], ["taskset", "-c", "1"]


def wrk(url, script, seconds, threads=2, connections=16, prefix=()):
    subprocess.run([*prefix, "wrk", "-t", str(threads), "-c", str(connections), "-d", "3s", "-s", script, url],
                   capture_output=True, check=True)  # warm-up
    out = subprocess.run([*prefix, "wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "5s",
                          "-s", script, url], capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def script_writer(work, token):
    """A function writing the wrk Lua script of one run (`bodies` None: a GET)."""
    def script(name, path, bodies=None, auth=True):
        lua = os.path.join(work, name + ".lua")
        header = f', ["Authorization"] = "Bearer {token}"' if token and auth else ""
        if bodies is None:
            get_headers = f', {{{header[2:]}}}' if header else ""
            open(lua, "w").write(LUA_GET % {"path": path, "done": DONE, "auth": get_headers})
        else:
            data = os.path.join(work, name + "_bodies.lua")
            lua_bodies(data, bodies)
            open(lua, "w").write(LUA % {"bodies": data, "path": path, "done": DONE, "auth": header})
        return lua
    return script


def times_runs(args, work, port, token, sessions, timed_sessions, script):
    """`--times`: our /v1/score without and with the sessions' response times, and /healthz, in interleaved rounds."""
    runs = [("/v1/score (25 items)", script("score", "/v1/score", sessions)),
            ("/v1/score (25 items + seconds)", script("score_times", "/v1/score", timed_sessions)),
            ("GET /healthz (HTTP alone)", script("healthz", "/healthz", auth=False))]
    client = dict(threads=1, prefix=CLIENT_CORE) if args.pinned else {}
    rounds = []
    for k in range(args.rounds):
        this = []
        for endpoint, lua in runs:
            r = wrk(f"http://127.0.0.1:{port}", lua, args.seconds, **client)
            r.update(endpoint=endpoint)
            this.append(r)
            print(f"round {k + 1}: {endpoint:32} {r['rps']:>10,.0f} req/s  p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  "
                  f"errors {sum(r['errors'].values())}", file=sys.stderr)
        rounds.append(this)
    print("| endpoint | requests/s | p50 (ms) | p99 (ms) | errors |")
    print("|---|---:|---:|---:|---:|")
    for j, (endpoint, _) in enumerate(runs):
        each = [rnd[j] for rnd in rounds]
        print(f"| {endpoint} | {statistics.median(x['rps'] for x in each):,.0f} | {statistics.median(x['p50_ms'] for x in each):.3f} | "
              f"{statistics.median(x['p99_ms'] for x in each):.3f} | {sum(sum(x['errors'].values()) for x in each)} |")
    ratios = [rnd[1]["rps"] / rnd[0]["rps"] for rnd in rounds]
    ratio = statistics.median(ratios)
    print(f"\n/v1/score with times: {ratio:.2f} of the throughput without (rounds {', '.join(f'{x:.2f}' for x in ratios)}; "
          f"goal ≥ 0.70: {'met' if ratio >= 0.7 else 'NOT met'})")
    json.dump({"machine": {"cores": os.cpu_count()}, "pinned": args.pinned, "seconds": args.seconds, "rounds": rounds, "ratio": ratio},
              open(os.path.join(args.out, "serve_load_times.json"), "w"), indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=".build/release/iqscore")
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--seconds", type=int, default=10, help="seconds of each endpoint's run in a round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every endpoint, interleaved; medians reported")
    ap.add_argument("--soak", type=int, default=300, help="soak seconds on /v1/score (0: none)")
    ap.add_argument("--peers", default=os.path.join(HERE, "..", "..", "shared", "peers"))
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--plain", action="store_true", help="ours without a token and without request log lines")
    ap.add_argument("--pinned", action="store_true",
                    help="thread for thread with the client off the servers' core: ours with one event loop and the peer with one "
                         "worker on core 0, wrk -t1 on core 1 (needs 2 cores and taskset)")
    ap.add_argument("--times", action="store_true", help="/v1/score with response times against without (no peer)")
    ap.add_argument("--baseline", help="an earlier build's iqscore, served beside this one: /v1/score before/after in each round")
    args = ap.parse_args()
    token = None if args.plain else TOKEN
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="serve-load-")
    rng = random.Random(12)
    procs = []

    def stop_all():
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    try:
        bank = os.path.join(work, "bank.csv")
        subprocess.run([args.bin, "simulate", "--model", "2pl", "--items", "1500", "--persons", "1", "--domains", ",".join(DOMAINS),
                        "--slope-mean-log", "0.3", "--bank-out", bank, "--out", "/dev/null", "--seed", "7"]
                       + (["--times", "--speed-sd", "0.3", "--speed-correlation", "0.3"] if args.times else []),
                       check=True, capture_output=True)
        cat = os.path.join(work, "cat.json")
        open(cat, "w").write('{"min_items": 8, "max_items": 25, "se_target": 0.30, "min_per_domain": 1, "randomesque": 5, "exposure_target": 0.25}')
        exposure = os.path.join(work, "k.csv")
        subprocess.run([args.bin, "cat", "simulate", "--bank", bank, "--config", cat, "--simulees", "200", "--seed", "7",
                        "--out", os.path.join(work, "cat_report.json"), "--exposure-out", exposure], check=True, capture_output=True)
        blueprint = os.path.join(work, "blueprint.json")
        json.dump({"length": 25, "domain_counts": {"pattern": 5, "logic": 4, "spatial": 4, "math": 4, "verbal": 4, "memory": 4},
                   "difficulty_counts": {"easy": 8, "medium": 9, "hard": 8},
                   "difficulty_bands": {"easy": [-6, -0.5], "medium": [-0.5, 0.5], "hard": [0.5, 6]}}, open(blueprint, "w"))

        import csv
        items = list(csv.DictReader(open(bank)))
        params = {r["item_id"]: (float(r["a"]), float(r["b"]), float(r["c"] or 0)) for r in items}
        ids = [r["item_id"] for r in items]

        def answer(item, theta):
            a, b, c = params[item]
            return 1 if rng.random() < c + (1 - c) / (1 + math.exp(-a * (theta - b))) else 0

        sessions = []
        for k in range(args.sessions):
            theta = rng.gauss(0, 1)
            chosen = rng.sample(ids, 25)
            sessions.append({"session_id": f"s{k}", "item_ids": chosen, "responses": [answer(i, theta) for i in chosen]})
        timed_sessions = []
        if args.times:
            # log T = β − τ + ε/α, τ ~ N(0, 0.3²), milliseconds as an app records them.
            times = {r["item_id"]: (float(r["time_intensity"]), float(r["time_discrimination"])) for r in items}
            for s in sessions:
                tau = rng.gauss(0, 0.3)
                seconds = [round(math.exp(times[i][0] - tau + rng.gauss(0, 1) / times[i][1]), 3) for i in s["item_ids"]]
                timed_sessions.append(dict(s, seconds=[max(t, 0.001) for t in seconds]))

        ours_port, peer_port = free_port(), free_port()
        tokens = os.path.join(work, "tokens")
        open(tokens, "w").write(f"scoring {TOKEN}\n")
        operator = ["--log-level", "notice"] if args.plain else ["--tokens", tokens, "--log-level", "info", "--log-format", "json"]
        server_prefix = SERVER_CORE if args.pinned else []
        environment = dict(os.environ, NIO_SINGLETON_GROUP_LOOP_COUNT="1") if args.pinned else None
        ours = subprocess.Popen([*server_prefix, args.bin, "serve", "--bank", bank, "--cat-config", cat, "--blueprint", blueprint,
                                 "--exposure", exposure, "--port", str(ours_port)] + operator,
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "ours.log"), "w"), env=environment)
        procs.append(ours)
        wait_port(ours_port, ours)

        # Histories of 10 administered items, made by our own adaptive steps (a stop before 10 is continued with
        # random unseen items, so every body carries exactly 10).
        cat_bodies = []
        for k in range(min(500, args.sessions)):
            theta = rng.gauss(0, 1)
            administered = []
            while len(administered) < 10:
                _, step = post(ours_port, "/v1/cat/next", {"session_id": f"c{k}", "administered": administered}, token)
                item = step["item_id"] if step["action"] == "administer" else rng.choice([i for i in ids if i not in {x["item_id"] for x in administered}])
                administered.append({"item_id": item, "response": answer(item, theta)})
            cat_bodies.append({"session_id": f"c{k}", "administered": administered})
        form_bodies = [{"seed": k} for k in range(1, 501)]

        # The same bodies, checked once: every one answers 200 on ours, and the peer scores the same sessions.
        status, first = post(ours_port, "/v1/score", sessions[0], token)
        assert status == 200 and "iq" in first, first
        if args.times:
            status, timed_first = post(ours_port, "/v1/score", timed_sessions[0], token)
            assert status == 200 and "times" in timed_first, timed_first
            return times_runs(args, work, ours_port, token, sessions, timed_sessions, script_writer(work, token))

        baseline = None
        if args.baseline:
            baseline_port = free_port()
            baseline = subprocess.Popen([*server_prefix, args.baseline, "serve", "--bank", bank, "--cat-config", cat, "--blueprint", blueprint,
                                         "--exposure", exposure, "--port", str(baseline_port)] + operator,
                                        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "baseline.log"), "w"), env=environment)
            procs.append(baseline)
            wait_port(baseline_port, baseline)
            status, baseline_first = post(baseline_port, "/v1/score", sessions[0], token)
            assert status == 200 and baseline_first["iq"] == first["iq"], baseline_first

        peer = subprocess.Popen([*server_prefix, os.path.join(args.peers, "aiq_scoring_server.py"), bank, "--port", str(peer_port),
                                 "--workers", "1" if args.pinned else "2"],
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "peer.log"), "w"))
        procs.append(peer)
        wait_port(peer_port, peer)
        status, peer_first = post(peer_port, "/score", {"item_ids": sessions[0]["item_ids"], "responses": sessions[0]["responses"]})
        assert status == 200, peer_first

        script = script_writer(work, token)

        peer_bodies = [{"item_ids": s["item_ids"], "responses": s["responses"]} for s in sessions]
        score_lua = script("score", "/v1/score", sessions)
        runs = [
            ("/v1/score (25 items)", "ours", ours_port, score_lua),
            *([("/v1/score (25 items)", "baseline", baseline_port, score_lua)] if baseline else []),
            ("/v1/score (25 items)", "peer", peer_port, script("peer_score", "/score", peer_bodies, auth=False)),
            ("/v1/cat/next (10 administered)", "ours", ours_port, script("cat", "/v1/cat/next", cat_bodies)),
            ("/v1/forms (25-item blueprint)", "ours", ours_port, script("forms", "/v1/forms", form_bodies)),
            ("GET /healthz (HTTP alone)", "ours", ours_port, script("healthz", "/healthz", auth=False)),
        ]
        # Rounds: every endpoint once per round, in the same order, so a drift of the machine's speed over minutes
        # (this shared machine's /healthz moved 15k–21k req/s within an hour) falls on all of them; each figure is
        # the median over the rounds, and each ratio the median of the ratios within a round.
        client = dict(threads=1, prefix=CLIENT_CORE) if args.pinned else {}
        rounds = []
        for k in range(args.rounds):
            # With a baseline, the two builds' /v1/score runs swap order every other round: the one measured second
            # in a pair ran 6–10% faster here whichever build it was (measured both ways), so a fixed order biases
            # the ratio.
            order = list(range(len(runs)))
            if baseline and k % 2 == 1:
                order[0], order[1] = order[1], order[0]
            this = [None] * len(runs)
            for j in order:
                endpoint, who, port, lua = runs[j]
                r = wrk(f"http://127.0.0.1:{port}", lua, args.seconds, **client)
                r.update(endpoint=endpoint, server=who)
                this[j] = r
                print(f"round {k + 1}: {who:5} {endpoint:32} {r['rps']:>10,.0f} req/s  p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  "
                      f"p99.9 {r['p999_ms']:.3f} ms  errors {sum(r['errors'].values())}", file=sys.stderr)
            rounds.append(this)
        results = []
        for j, (endpoint, who, _, _) in enumerate(runs):
            each = [rnd[j] for rnd in rounds]
            r = {key: statistics.median(x[key] for x in each) for key in ("rps", "p50_ms", "p99_ms", "p999_ms", "max_ms")}
            r.update(endpoint=endpoint, server=who, requests=sum(x["requests"] for x in each),
                     errors={e: sum(x["errors"][e] for x in each) for e in each[0]["errors"]}, rounds=each)
            results.append(r)
        peer.send_signal(signal.SIGTERM)
        peer.wait(10)
        if baseline:
            baseline.send_signal(signal.SIGTERM)
            baseline.wait(10)

        soak = None
        if args.soak > 0:
            lua = script("soak", "/v1/score", sessions)
            samples = []
            w = subprocess.Popen([*(CLIENT_CORE if args.pinned else []), "wrk", "-t", "1" if args.pinned else "2", "-c", "16", "-d", f"{args.soak}s", "--timeout", "5s", "-s", lua,
                                  f"http://127.0.0.1:{ours_port}"], stdout=subprocess.PIPE, text=True)
            start = time.time()
            while w.poll() is None:
                samples.append({"t": round(time.time() - start, 1), "rss_mb": round(rss_mb(ours.pid), 1)})
                for _ in range(100):
                    if w.poll() is not None:
                        break
                    time.sleep(0.1)
            samples.append({"t": round(time.time() - start, 1), "rss_mb": round(rss_mb(ours.pid), 1)})
            line = next(l for l in w.stdout.read().splitlines() if l.startswith("RESULT "))
            soak = json.loads(line[len("RESULT "):])
            soak["rss_samples"] = samples
            rss = [s["rss_mb"] for s in samples[1:]]  # after the first 10 s
            soak["rss_first_mb"], soak["rss_last_mb"], soak["rss_max_mb"] = samples[0]["rss_mb"], samples[-1]["rss_mb"], max(rss or [0])
            print(f"soak {args.soak} s: {soak['rps']:,.0f} req/s, errors {sum(soak['errors'].values())}, RSS "
                  f"{soak['rss_first_mb']} → {soak['rss_last_mb']} MB (max {soak['rss_max_mb']})", file=sys.stderr)

        def within(a, b):
            """The median over rounds of a's requests/s over b's in the same round."""
            return statistics.median(x["rps"] / y["rps"] for x, y in zip(a["rounds"], b["rounds"]))

        report = {"machine": {"cores": os.cpu_count()}, "wrk": "-t1 -c16 on core 1, servers on core 0 (ours: one event loop; the peer: one worker)" if args.pinned else "-t2 -c16, 3 s warm-up", "seconds": args.seconds, "rounds": args.rounds,
                  "ours": "plain" if args.plain else "token + JSON request log lines to a file", "runs": results, "soak": soak}
        json.dump(report, open(os.path.join(args.out, "serve_load.json"), "w"), indent=2)

        ours_score = next(r for r in results if r["server"] == "ours" and r["endpoint"].startswith("/v1/score"))
        peer_score = next(r for r in results if r["server"] == "peer")
        health = next(r for r in results if r["endpoint"].startswith("GET /healthz"))
        print("| endpoint | server | requests/s | p50 (ms) | p99 (ms) | p99.9 (ms) | errors | reference | ratio |")
        print("|---|---|---:|---:|---:|---:|---:|---|---:|")
        for r in results:
            if r["server"] == "peer":
                ref, ratio = "–", ""
            elif r["endpoint"].startswith("/v1/score"):
                ref, ratio = "the peer's /score", f"{within(r, peer_score):.1f}× the peer's requests/s"
            elif r is health:
                ref, ratio = "–", ""
            else:
                ref, ratio = "our /healthz", f"{within(r, health):.2f} of HTTP alone"
            print(f"| {r['endpoint']} | {r['server']} | {r['rps']:,.0f} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} | "
                  f"{r['p999_ms']:.3f} | {sum(r['errors'].values())} | {ref} | {ratio} |")
        print(f"\np99 of /v1/score: ours {ours_score['p99_ms']:.3f} ms vs peer {peer_score['p99_ms']:.3f} ms "
              f"({peer_score['p99_ms'] / ours_score['p99_ms']:.1f}× lower)")
        if baseline:
            before = next(r for r in results if r["server"] == "baseline")
            print(f"/v1/score this build / baseline ({args.baseline}): {within(ours_score, before):.3f} of its requests/s "
                  f"(median of {args.rounds} within-round ratios); p99 {ours_score['p99_ms']:.3f} vs {before['p99_ms']:.3f} ms")
        vs_peer, vs_ceiling = within(ours_score, peer_score), within(ours_score, health)
        print(f"goals (issue 25): {vs_peer:.1f}× the peer (≥ 8: {'met' if vs_peer >= 8 else 'NOT met'}), "
              f"{100 * vs_ceiling:.0f}% of /healthz (≥ 85%: {'met' if vs_ceiling >= 0.85 else 'NOT met'}), "
              f"p99 {ours_score['p99_ms']:.2f} ms (< 2: {'met' if ours_score['p99_ms'] < 2 else 'NOT met'})")
    finally:
        stop_all()
        shutil.rmtree(work, ignore_errors=True)  # the bank, bodies and logs of this run


if __name__ == "__main__":
    main()

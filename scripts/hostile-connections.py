#!/usr/bin/env python3
"""Hostile connections against `iqscore serve`, and a client that behaves, in one run (stdlib only).

Starts the server on a simulated 1,500-item bank, then for --seconds opens, from one process, thousands of
  * idle connections (connect, send nothing),
  * slow-header connections (a request line, then one header byte per second),
  * slow-body connections (a whole head with Content-Length 4 MiB, then one body byte per second),
  * fat-body connections (most of a 3 MiB body at once, then nothing: the process-wide body budget),
each reconnecting as soon as the server closes it, as a persistent attacker would. More connections are asked for
than --max-connections allows, so the server must choose whom to close. Beside them a second process behaves:
GET /healthz and POST /v1/score (25 items) on a kept-alive connection, and every fifth request on a new one.

Checks (exit 1 when one fails; exit 3 when the only failure is the p99 latency of the behaving client):
  * the behaving client: no failed request, p99 latency of /healthz and of /v1/score under --p99-ms (100 ms);
  * the server's peak resident memory under the bound it states at start-up for its limits
    (ConnectionLimits.memoryBound), above its resident memory before the attack;
  * every hostile connection closed by the server, none open longer than its timeout (plus slack) unless it was
    chosen to make room first; the server's open connections back to the behaving ones after the attack.

    python3 scripts/hostile-connections.py --binary .build/release/iqscore [--seconds 30]
"""
import argparse, asyncio, json, multiprocessing, os, re, resource, shutil, signal, socket, subprocess, sys, tempfile, time
import http.client

SCORE_ITEMS = [f"i{k:04d}" for k in range(1, 26)]
SCORE_BODY = json.dumps({"session_id": "well-behaved", "item_ids": SCORE_ITEMS,
                         "responses": [k % 2 for k in range(25)]}).encode()


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def metrics(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    values = {}
    for line in text.splitlines():
        m = re.match(r'^(iqscore_connections_\w+|iqscore_request_body_bytes_buffered)(\{reason="([\w-]+)"\})? ([0-9.e+]+)$', line)
        if m:
            values[m.group(3) or m.group(1)] = float(m.group(4))
    return values


# ---------------------------------------------------------------- the client that behaves (its own process)

def behaving_client(port, seconds, out):
    lat = {"healthz": [], "score": []}
    fresh_lat, kept_lat = [], []
    failures = []
    conn = None
    deadline = time.time() + seconds
    k = 0
    while time.time() < deadline:
        k += 1
        route = "healthz" if k % 2 else "score"
        fresh = k % 5 == 0
        try:
            if conn is None or fresh:
                if conn is not None:
                    conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            t0 = time.perf_counter()
            if route == "healthz":
                conn.request("GET", "/healthz")
            else:
                conn.request("POST", "/v1/score", body=SCORE_BODY, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            body = r.read()
            dt = (time.perf_counter() - t0) * 1000
            if r.status != 200:
                failures.append(f"{route}: {r.status} {body[:200]!r}")
            lat[route].append(dt)
            (fresh_lat if fresh else kept_lat).append(dt)
        except Exception as e:  # a reset or timeout is a failure of the server's defence
            failures.append(f"{route}: {type(e).__name__}: {e}")
            conn = None
        time.sleep(0.02)
    out.put({"latency": lat, "failures": failures, "new_connection": fresh_lat, "kept_alive": kept_lat})


# ---------------------------------------------------------------- the attackers (asyncio, one process)

class Tally:
    def __init__(self):
        self.opened = 0
        self.closed_by_server = 0
        self.connect_errors = 0
        self.lifetimes = {}      # kind -> list of seconds from connect to the server's close
        self.statuses = {}       # first status line the server sent before closing, by kind
        self.live = 0
        self.peak_live = 0


async def hostile(kind, port, stop_at, tally, args):
    head_slow = b"POST /v1/score HTTP/1.1\r\nHost: x\r\nX-Slow: "
    head_body = (b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 4194304\r\n\r\n")
    fat = 3 << 20
    head_fat = (b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % fat)
    while time.time() < stop_at:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
        except Exception:
            tally.connect_errors += 1
            await asyncio.sleep(0.5)
            continue
        tally.opened += 1
        tally.live += 1
        tally.peak_live = max(tally.peak_live, tally.live)
        t0 = time.time()
        received = b""

        async def drain():
            nonlocal received
            try:
                while True:
                    chunk = await reader.read(4096)
                    if not chunk:
                        return
                    received += chunk
            except Exception:   # reset by the server: closed all the same
                return

        reading = asyncio.ensure_future(drain())
        try:
            if kind == "slow-header":
                writer.write(head_slow)
            elif kind == "slow-body":
                writer.write(head_body)
            elif kind == "fat-body":
                writer.write(head_fat + b"[" * (fat - 1))
            while not reading.done() and time.time() < stop_at + args.linger:
                if kind in ("slow-header", "slow-body"):
                    writer.write(b"a" if kind == "slow-header" else b" ")
                    try:
                        await asyncio.wait_for(writer.drain(), 1)
                    except Exception:
                        pass
                await asyncio.wait([reading], timeout=1.0)
        except Exception:
            pass
        if reading.done():
            tally.closed_by_server += 1
            tally.lifetimes.setdefault(kind, []).append(time.time() - t0)
            status = received.split(b"\r\n", 1)[0].decode("latin1") if received else "(closed without a response)"
            tally.statuses.setdefault(kind, {}).setdefault(status, 0)
            tally.statuses[kind][status] += 1
        else:
            reading.cancel()
        tally.live -= 1
        writer.close()


async def attack(port, args, tally):
    stop_at = time.time() + args.seconds
    groups = [("idle", args.idle), ("slow-header", args.slow_header), ("slow-body", args.slow_body),
              ("fat-body", args.fat_body)]
    tasks = []
    for kind, n in groups:
        for _ in range(n):
            tasks.append(asyncio.ensure_future(hostile(kind, port, stop_at, tally, args)))
            if len(tasks) % 200 == 0:
                await asyncio.sleep(0.05)   # open in waves, as a botnet's connections arrive
    await asyncio.gather(*tasks)


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=".build/debug/iqscore")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--idle", type=int, default=2000)
    ap.add_argument("--slow-header", type=int, default=2000)
    ap.add_argument("--slow-body", type=int, default=2000)
    ap.add_argument("--fat-body", type=int, default=100)
    ap.add_argument("--max-connections", type=int, default=4000)
    ap.add_argument("--header-timeout", type=int, default=5)
    ap.add_argument("--body-timeout", type=int, default=10)
    ap.add_argument("--max-buffered-body-bytes", type=int, default=64 << 20)
    ap.add_argument("--p99-ms", type=float, default=100)
    ap.add_argument("--linger", type=float, default=15, help="seconds the attackers wait for the server to close them after the attack")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.idle + args.slow_header + args.slow_body + args.fat_body + 256
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="iqscore-hostile-")
    server = None
    try:
        subprocess.run([binary, "simulate", "--model", "2pl", "--items", "1500", "--items-per-session", "25",
                        "--persons", "20", "--domains", "pattern,logic,spatial,math,verbal,memory", "--layout", "long",
                        "--out", "sessions.csv", "--bank-out", "bank.csv", "--seed", "7"], cwd=work, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        log = open(os.path.join(work, "serve.log"), "w")
        server = subprocess.Popen([binary, "serve", "--bank", "bank.csv", "--port", "0",
                                   "--max-connections", str(args.max_connections),
                                   "--header-timeout", str(args.header_timeout), "--body-timeout", str(args.body_timeout),
                                   "--max-buffered-body-bytes", str(args.max_buffered_body_bytes)],
                                  cwd=work, stdout=subprocess.DEVNULL, stderr=log)
        port = None
        for _ in range(600):
            text = open(os.path.join(work, "serve.log")).read()
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.1)
        if port is None:
            print(open(os.path.join(work, "serve.log")).read(), file=sys.stderr)
            sys.exit("the server did not start")
        rss_before = rss_mb(server.pid)
        # The bound the server states for its settings (ConnectionLimits.memoryBound), above its idle footprint.
        stated = re.search(r"holding at most (\d+) MiB with their requests", open(os.path.join(work, "serve.log")).read())
        if not stated:
            sys.exit("the server did not state its memory bound at start-up")
        bound_mb = int(stated.group(1)) + rss_before
        peak = [rss_before]

        out = multiprocessing.Queue()
        client = multiprocessing.Process(target=behaving_client, args=(port, args.seconds + 2, out))
        client.start()

        tally = Tally()
        sampler_stop = False

        async def sample():
            while not sampler_stop:
                peak[0] = max(peak[0], rss_mb(server.pid))
                await asyncio.sleep(0.25)

        async def run_all():
            nonlocal sampler_stop
            # A write to a connection the server has just closed fails: that is the point, not news.
            asyncio.get_running_loop().set_exception_handler(lambda loop, context: None)
            s = asyncio.ensure_future(sample())
            await attack(port, args, tally)
            sampler_stop = True
            await s

        t0 = time.time()
        asyncio.run(run_all())
        attack_seconds = time.time() - t0
        result = out.get(timeout=120)
        client.join()
        time.sleep(1)
        after = metrics(port)
        rss_after = rss_mb(server.pid)
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)

    lat = result["latency"]
    figures = {
        "attack_seconds": round(attack_seconds, 1),
        "hostile_connections_opened": tally.opened,
        "hostile_connections_closed_by_server": tally.closed_by_server,
        "hostile_connect_errors": tally.connect_errors,
        "hostile_peak_open": tally.peak_live,
        "hostile_lifetime_max_s": {k: round(max(v), 2) for k, v in tally.lifetimes.items()},
        "hostile_lifetime_median_s": {k: round(percentile(v, 50), 2) for k, v in tally.lifetimes.items()},
        "server_answers_to_hostile": tally.statuses,
        "behaving_requests": {k: len(v) for k, v in lat.items()},
        "behaving_failures": result["failures"][:10],
        "behaving_failure_count": len(result["failures"]),
        "healthz_ms": {"p50": round(percentile(lat["healthz"], 50), 2), "p99": round(percentile(lat["healthz"], 99), 2),
                       "max": round(max(lat["healthz"] or [0]), 2)},
        "score_ms": {"p50": round(percentile(lat["score"], 50), 2), "p99": round(percentile(lat["score"], 99), 2),
                     "max": round(max(lat["score"] or [0]), 2)},
        "by_connection_ms": {kind: {"n": len(v), "p50": round(percentile(v, 50), 2), "p99": round(percentile(v, 99), 2)}
                             for kind, v in (("new", result["new_connection"]), ("kept_alive", result["kept_alive"]))},
        "rss_mb": {"before": round(rss_before, 1), "peak": round(peak[0], 1), "after": round(rss_after, 1),
                   "bound": round(bound_mb, 1)},
        "server_metrics_after": after,
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)

    failures = []
    latency = []
    if result["failures"]:
        failures.append(f"{len(result['failures'])} requests of the behaving client failed: {result['failures'][:3]}")
    for route in ("healthz", "score"):
        if not lat[route]:
            failures.append(f"no {route} request was answered")
        elif percentile(lat[route], 99) > args.p99_ms:
            latency.append(f"{route} p99 {percentile(lat[route], 99):.1f} ms > {args.p99_ms} ms")
    if peak[0] > bound_mb:
        failures.append(f"peak RSS {peak[0]:.0f} MB over the bound {bound_mb:.0f} MB")
    slack = 3
    limits = {"idle": args.header_timeout, "slow-header": args.header_timeout, "slow-body": args.body_timeout, "fat-body": args.body_timeout}
    for kind, values in tally.lifetimes.items():
        if max(values) > limits[kind] + slack:
            failures.append(f"a {kind} connection stayed open {max(values):.1f} s (timeout {limits[kind]} s)")
    if tally.closed_by_server < tally.opened * 0.99:
        failures.append(f"the server closed {tally.closed_by_server} of {tally.opened} hostile connections")
    if after.get("iqscore_connections_open", 0) > 2:
        failures.append(f"{after.get('iqscore_connections_open')} connections still open after the attack")
    for f in failures + latency:
        print("FAIL:", f, file=sys.stderr)
    print(f"hostile connections: {'FAIL' if failures or latency else 'ok'}")
    # Exit 3 when the behaving client's latency is the only failure (a shared machine's noise can cause it; CI
    # runs the attack once more then), 1 for any other failure.
    sys.exit(1 if failures else 3 if latency else 0)


if __name__ == "__main__":
    main()

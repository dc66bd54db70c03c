#!/usr/bin/env python3
"""Two `iqscore serve` instances behind haproxy (deploy/haproxy.cfg), as an operator deploys them, without Docker.

Starts two instances on a simulated 1,500-item six-domain bank (exposure control calibrated at start-up, tokens
from a file, JSON logs, a 2 s drain) and haproxy 2.6 in front of them, then checks (exit 1 when one fails):

  1. access through the proxy: no token → 401 problem+json; POST /v1/admin/reload → 403 from the proxy (also
     spelled //v1/admin/reload and /v1//admin/reload, which the instances' router takes for the same route),
     with an admin token, so only the proxy can have refused it; a client's X-Request-Id comes back unchanged and is in the answering instance's log line; a request without
     one gets the proxy's id, also in the instance's log;
  2. adaptive tests whose steps alternate instances: --cat-tests tests driven to their end through the proxy
     (which balances every request round-robin, so every test's steps must come from both instances) give exactly the items and final scores of the same tests
     against one instance (the steps are stateless and seeded by session and bank version, and every instance
     calibrates the same exposure parameters);
  3. a rolling bank update under load: --clients threads send /v1/score and /v1/cat/next through the proxy for
     the whole phase while each instance in turn gets SIGTERM (it drains: /readyz 503 while it still serves, so
     haproxy takes it out before its port closes), exits 0 within the drain and the shutdown timeout, and is
     started again on a new bank; then both are
     moved back to the first bank with SIGHUP. Every request must be answered 200 — zero failures — the
     responses must move from the old bank version to the new one, and at the end every instance serves the
     last version.

Processes are stopped and the work directory removed at the end, also on an exception, Ctrl-C or SIGTERM.
--out DIR keeps the figures (summary.json) and the instances' and haproxy's logs.

    python3 scripts/deployment-test.py --binary .build/release/iqscore [--haproxy haproxy] [--seconds 20] [--out DIR]
"""
import argparse, hashlib, http.client, json, os, random, re, shutil, signal, socket, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCORING = "deployment-test-scoring-token-0001"
ADMIN = "deployment-test-admin-token-000001"
AUTH = {"Authorization": f"Bearer {SCORING}"}
DOMAINS = "pattern,logic,spatial,math,verbal,memory"
DRAIN, SHUTDOWN_TIMEOUT = 2, 10   # --drain-seconds given to the instances; --shutdown-timeout (the default)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, method, path, body=None, headers=None, timeout=10):
    """One request on a new connection: (status, headers, parsed JSON or raw text)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        h = dict(headers or {})
        if data is not None:
            h["Content-Type"] = "application/json"
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw.decode(errors="replace")
        return r.status, {k.lower(): v for k, v in r.getheaders()}, parsed
    finally:
        c.close()


class Instance:
    def __init__(self, binary, work, name, port):
        self.binary, self.name, self.port = binary, name, port
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.log_path = os.path.join(self.dir, "serve.log")
        self.proc = None

    def start(self):
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--bank", "BANK.csv", "--cat-config", "../cat.json", "--host", "127.0.0.1", "--port", str(self.port),
             "--instance", self.name, "--tokens", "../tokens", "--drain-seconds", str(DRAIN), "--log-format", "json",
             "--client-from-forwarded-for"],
            cwd=self.dir, stdout=subprocess.DEVNULL, stderr=log)

    def wait_ready(self, seconds=120):
        end = time.time() + seconds
        while time.time() < end:
            if self.proc.poll() is not None:
                raise SystemExit(f"instance {self.name} exited with {self.proc.returncode}:\n{open(self.log_path).read()[-3000:]}")
            try:
                status, _, body = call(self.port, "GET", "/readyz", timeout=2)
                if status == 200:
                    return body["bank_version"]
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"instance {self.name} not ready after {seconds} s")

    def install_bank(self, source):
        """A new bank the way an operator should write one: a new file renamed over the old."""
        shutil.copyfile(source, os.path.join(self.dir, ".BANK.csv.new"))
        os.rename(os.path.join(self.dir, ".BANK.csv.new"), os.path.join(self.dir, "BANK.csv"))

    def log_lines(self):
        lines = []
        for line in open(self.log_path):
            if line.startswith("{"):
                try:
                    lines.append(json.loads(line))
                except ValueError:
                    pass
        return lines


def haproxy_servers(sock_path):
    """{server name: status} from the runtime API's `show stat`."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(sock_path)
    s.sendall(b"show stat\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    rows = data.decode().splitlines()
    header = rows[0].lstrip("# ").split(",")
    out = {}
    for row in rows[1:]:
        f = row.split(",")
        if len(f) == len(header) and f[0] == "iqscore" and f[1] not in ("BACKEND", "FRONTEND"):
            out[f[1]] = f[header.index("status")]
    return out


def wait_up(sock_path, names, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        try:
            state = haproxy_servers(sock_path)
            if all(state.get(n, "").startswith("UP") for n in names):
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"haproxy does not see {names} UP after {seconds} s: {haproxy_servers(sock_path)}")


def answer(session, item):
    """A fixed response per (session, item), the same in every run and through every path."""
    return 1 if hashlib.sha256(f"{session}/{item}".encode()).digest()[0] < 150 else 0


def adaptive_test(port, session):
    """Drives one adaptive test to its end on new connections: ([(item, instance)], final score)."""
    administered, steps = [], []
    while True:
        status, headers, step = call(port, "POST", "/v1/cat/next", {"session_id": session, "administered": administered}, AUTH)
        if status != 200:
            raise SystemExit(f"{session}: step {len(administered)} answered {status}: {step}")
        if step["action"] == "stop":
            return steps, step["score"]
        steps.append((step["item_id"], headers.get("x-iqscore-instance")))
        administered.append({"item_id": step["item_id"], "response": answer(session, step["item_id"])})


class Load:
    """Client threads through the proxy, each on a kept-alive connection (reconnecting when it closes)."""

    def __init__(self, port, items, clients):
        self.port, self.items, self.clients = port, items, clients
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.ok = 0
        self.started = self.stopped = None
        self.failures = []
        self.versions = {}
        self.timeline = []  # (time, version) of each answered request
        self.threads = [threading.Thread(target=self.run, args=(k,), daemon=True) for k in range(clients)]

    def run(self, k):
        rng = random.Random(k)
        conn = None
        n = 0
        while not self.stop.is_set():
            n += 1
            if n % 2:
                chosen = rng.sample(self.items, 25)
                path, body = "/v1/score", {"session_id": f"load{k}-{n}", "item_ids": chosen, "responses": [answer(k, i) for i in chosen]}
            else:
                history = [{"item_id": i, "response": answer(k, i)} for i in rng.sample(self.items, 4)]
                path, body = "/v1/cat/next", {"session_id": f"load{k}-{n}", "administered": history}
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("POST", path, body=json.dumps(body), headers={**AUTH, "Content-Type": "application/json"})
                r = conn.getresponse()
                raw = r.read()
                version = r.getheader("X-Bank-Version")
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                with self.lock:
                    if r.status == 200:
                        self.ok += 1
                        self.versions[version] = self.versions.get(version, 0) + 1
                        self.timeline.append((time.time(), version))
                    else:
                        self.failures.append(f"{path}: {r.status} {raw[:200]!r}")
            except (OSError, http.client.HTTPException) as e:
                with self.lock:
                    self.failures.append(f"{path}: {type(e).__name__}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=".build/release/iqscore")
    ap.add_argument("--haproxy", default="haproxy")
    ap.add_argument("--seconds", type=float, default=20, help="load before, between and after the instance restarts, in all")
    ap.add_argument("--cat-tests", type=int, default=30)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--out", help="keep the figures (summary.json) and the logs in this directory")
    args = ap.parse_args()
    # A CI timeout or `kill` sends SIGTERM: unwind through `finally` so no instance or haproxy is left behind.
    def terminated(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminated)
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="iqscore-deploy-")
    instances, proxy = [], None
    checks = []
    summary = {}

    def check(ok, text):
        checks.append((bool(ok), text))
        print(("ok   " if ok else "FAIL ") + text, flush=True)

    try:
        for seed, name in (("7", "bank_a.csv"), ("8", "bank_b.csv")):
            subprocess.run([binary, "simulate", "--model", "2pl", "--items", "1500", "--persons", "1", "--domains", DOMAINS,
                            "--slope-mean-log", "0.3", "--bank-out", os.path.join(work, name), "--out", "/dev/null", "--seed", seed],
                           check=True, capture_output=True)
        open(os.path.join(work, "cat.json"), "w").write('{"max_items": 20, "min_per_domain": 2, "randomesque": 5}')
        open(os.path.join(work, "tokens"), "w").write(f"scoring {SCORING}\nadmin {ADMIN}\n")
        items = [line.split(",")[0] for line in open(os.path.join(work, "bank_a.csv")).read().splitlines()[1:]]

        for name in ("a", "b"):
            inst = Instance(binary, work, name, free_port())
            inst.install_bank(os.path.join(work, "bank_a.csv"))
            inst.start()
            instances.append(inst)
        version_a = [inst.wait_ready() for inst in instances][0]
        started = time.time()

        proxy_port = free_port()
        sock = os.path.join(work, "haproxy.sock")
        env = dict(os.environ, HAPROXY_BIND=f"127.0.0.1:{proxy_port}", IQSCORE_1=f"127.0.0.1:{instances[0].port}",
                   IQSCORE_2=f"127.0.0.1:{instances[1].port}", HAPROXY_STATS=sock)
        proxy_log = open(os.path.join(work, "haproxy.log"), "w")
        proxy = subprocess.Popen([args.haproxy, "-db", "-f", os.path.join(ROOT, "deploy", "haproxy.cfg")], env=env,
                                 stdout=proxy_log, stderr=subprocess.STDOUT)
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        wait_up(sock, ["iqscore1", "iqscore2"])
        print(f"two instances ready ({version_a}) and UP behind haproxy on port {proxy_port}", flush=True)

        # 1. Access and request ids through the proxy.
        good = {"session_id": "x", "item_ids": items[:25], "responses": [answer("x", i) for i in items[:25]]}
        status, headers, body = call(proxy_port, "POST", "/v1/score", good)
        check(status == 401 and headers.get("content-type") == "application/problem+json" and "www-authenticate" in headers,
              f"no token through the proxy: {status} {headers.get('content-type')}")
        for path in ("/v1/admin/reload", "//v1/admin/reload", "/v1//admin/reload"):
            status, headers, _ = call(proxy_port, "POST", path, None, {"Authorization": f"Bearer {ADMIN}"})
            check(status == 403 and "x-iqscore-instance" not in headers,
                  f"POST {path} with an admin token through the proxy is denied there: {status}"
                  + (f" (answered by instance {headers['x-iqscore-instance']})" if "x-iqscore-instance" in headers else ""))
        status, headers, _ = call(proxy_port, "POST", "/v1/score", good, {**AUTH, "X-Request-Id": "client-chosen-id-42"})
        served_by = headers.get("x-iqscore-instance")
        check(status == 200 and headers.get("x-request-id") == "client-chosen-id-42", f"the client's X-Request-Id comes back: {headers.get('x-request-id')}")
        status, headers, _ = call(proxy_port, "POST", "/v1/score", good, AUTH)
        made, made_by = headers.get("x-request-id", ""), headers.get("x-iqscore-instance")
        check(status == 200 and re.fullmatch(r"[0-9A-F]+:[0-9A-F]+_[0-9A-F]+:[0-9A-F]+_[0-9A-F]+_[0-9A-F]+:[0-9A-F]+", made) is not None,
              f"a request without an id gets the proxy's: {made}")
        time.sleep(0.3)  # log lines are written in batches (at most 50 ms late)
        by_name = {inst.name: inst for inst in instances}
        logged = [l for l in by_name[served_by].log_lines() if l.get("request_id") == "client-chosen-id-42"]
        check(len(logged) == 1 and logged[0].get("route") == "/v1/score" and logged[0].get("status") == 200 and logged[0].get("token"),
              f"instance {served_by} logged the client's id: {logged}")
        logged = [l for l in by_name[made_by].log_lines() if l.get("request_id") == made]
        check(len(logged) == 1, f"instance {made_by} logged the proxy's id")

        # 2. Adaptive tests through the proxy (steps alternate instances) against one instance.
        alternated = total_steps = both = 0
        same = True
        for k in range(args.cat_tests):
            session = f"cat-{k}"
            via_proxy, score_proxy = adaptive_test(proxy_port, session)
            direct, score_direct = adaptive_test(instances[0].port, session)
            total_steps += len(via_proxy)
            alternated += sum(1 for (x, y) in zip(via_proxy, via_proxy[1:]) if x[1] != y[1])
            both += len({name for _, name in via_proxy}) == 2
            if [i for i, _ in via_proxy] != [i for i, _ in direct] or score_proxy != score_direct:
                same = False
                print(f"  {session}: proxy {[i for i, _ in via_proxy]} vs one instance {[i for i, _ in direct]}", flush=True)
        check(same, f"{args.cat_tests} adaptive tests ({total_steps} steps, {alternated} changes of instance between consecutive steps) "
                    f"give the items and final scores of the same tests on one instance")
        check(alternated > total_steps / 3, f"the proxy moved the steps between instances ({alternated} of {total_steps - args.cat_tests} step pairs)")
        check(both == args.cat_tests, f"{both} of {args.cat_tests} adaptive tests had steps answered by both instances")
        summary["adaptive"] = {"tests": args.cat_tests, "steps": total_steps, "instance_changes": alternated,
                               "tests_on_both_instances": both, "identical_to_one_instance": same}

        # 3. Rolling update under load, then a SIGHUP round.
        load = Load(proxy_port, items, args.clients)
        load.started = time.time()
        for t in load.threads:
            t.start()
        phase = max(args.seconds / 4, 2)
        time.sleep(phase)
        outages = {}
        version_b = None
        for inst in instances:
            inst.install_bank(os.path.join(work, "bank_b.csv"))
            t0 = time.time()
            inst.proc.send_signal(signal.SIGTERM)
            limit = DRAIN + SHUTDOWN_TIMEOUT + 2   # drain, requests under way, and slack for a busy machine
            try:
                rc = inst.proc.wait(limit)
            except subprocess.TimeoutExpired:
                rc = None
            stopped_after = time.time() - t0
            check(rc == 0, f"instance {inst.name} exited {rc} {stopped_after:.1f} s after SIGTERM ({DRAIN} s drain; limit {limit} s)")
            summary.setdefault("sigterm_to_exit_s", {})[inst.name] = round(stopped_after, 2)
            inst.start()
            version_b = inst.wait_ready()
            wait_up(sock, ["iqscore1" if inst is instances[0] else "iqscore2"])
            outages[inst.name] = time.time() - t0
            time.sleep(phase)
        for inst in instances:
            inst.install_bank(os.path.join(work, "bank_a.csv"))
            inst.proc.send_signal(signal.SIGHUP)
        hup = time.time()
        deadline = time.time() + 60
        while time.time() < deadline:
            versions = {call(inst.port, "GET", "/readyz")[2]["bank_version"] for inst in instances}
            if versions == {version_a}:
                break
            time.sleep(0.1)
        switched = time.time()  # a reload installs the new bank once it has loaded (exposure calibrated)
        time.sleep(phase)
        load.stop.set()
        for t in load.threads:
            t.join(15)
        load.stopped = time.time()
        load_seconds = load.stopped - load.started
        elapsed = time.time() - started
        final = {inst.name: call(inst.port, "GET", "/readyz")[2]["bank_version"] for inst in instances}

        print(f"SIGHUP: both instances on {version_a} after {switched - hup:.1f} s (each reload calibrates exposure control)", flush=True)
        print(f"load: {load.ok + len(load.failures)} requests in {load_seconds:.1f} s "
              f"({(load.ok + len(load.failures)) / load_seconds:.0f} req/s) from {args.clients} client threads over the update; "
              f"{load.ok} answered 200, {len(load.failures)} failed; by bank version {load.versions}; instances out of rotation for "
              + ", ".join(f"{n} {s:.1f} s" for n, s in outages.items()), flush=True)
        for f in load.failures[:10]:
            print("  failed: " + f)
        check(not load.failures and load.ok > 0, f"rolling update and reloads under load: {load.ok} requests, {len(load.failures)} failed")
        check(version_b is not None and version_b != version_a and load.versions.get(version_b, 0) > 0 and load.versions.get(version_a, 0) > 0,
              f"responses moved from {version_a} to {version_b} and back")
        after_hup = [v for (t, v) in load.timeline if t > switched + 0.5]
        check(bool(after_hup) and set(after_hup) == {version_a} and set(final.values()) == {version_a},
              f"after the SIGHUP round every instance serves {version_a}: {final}")
        summary["load"] = {"seconds": round(load_seconds, 1), "clients": args.clients,
                           "requests": load.ok + len(load.failures), "answered_200": load.ok,
                           "requests_per_second": round((load.ok + len(load.failures)) / load_seconds, 1),
                           "failures": len(load.failures), "failure_examples": load.failures[:10],
                           "by_bank_version": load.versions}
        summary["out_of_rotation_s"] = {n: round(v, 2) for n, v in outages.items()}
        summary["sighup_switch_s"] = round(switched - hup, 2)
        summary["bank_versions"] = {"first": version_a, "second": version_b, "final": final}
        print(f"done in {elapsed:.0f} s", flush=True)
    finally:
        for inst in instances:
            if inst.proc and inst.proc.poll() is None:
                inst.proc.send_signal(signal.SIGTERM)
        if proxy and proxy.poll() is None:
            proxy.terminate()
        for inst in instances:
            if inst.proc:
                try:
                    inst.proc.wait(20)
                except subprocess.TimeoutExpired:
                    inst.proc.kill()
        if proxy:
            try:
                proxy.wait(5)
            except subprocess.TimeoutExpired:
                proxy.kill()
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            summary["checks"] = [{"ok": ok, "check": text} for ok, text in checks]
            with open(os.path.join(args.out, "summary.json"), "w") as f:
                json.dump(summary, f, indent=1)
            for inst in instances:
                if os.path.exists(inst.log_path):
                    shutil.copyfile(inst.log_path, os.path.join(args.out, f"instance-{inst.name}.log"))
            if os.path.exists(os.path.join(work, "haproxy.log")):
                shutil.copyfile(os.path.join(work, "haproxy.log"), os.path.join(args.out, "haproxy.log"))
        if os.environ.get("KEEP_DEPLOY_WORK"):
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    failed = [t for ok, t in checks if not ok]
    if failed:
        print(f"{len(failed)} of {len(checks)} checks failed", file=sys.stderr)
        sys.exit(1)
    print(f"all {len(checks)} checks passed")


if __name__ == "__main__":
    main()

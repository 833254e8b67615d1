#!/usr/bin/env python3
"""A fleet watch left running: one kwatch watching the pods of every context of a
kubeconfig for hours while the fleet churns, its clusters go away and come back, and its
kubeconfig changes under it.

    benches/soak.py [KWATCH]   # default: builds release, $CARGO_TARGET_DIR/release/kwatch

It starts `kwatch sim --clusters N --objects P --churn C` (N clusters of P pods, each
changing C times a second) and `kwatch pods -A --all-contexts -o json --metrics` on a
copy of its kubeconfig, and reads kwatch's JSON lines as a script would, keeping each
context's state as its deltas leave it. Meanwhile:

- every KILL_EVERY seconds a random cluster restarts (`POST /_sim/restart`): its
  connections cut, its port refusing connections for DOWN_MIN..DOWN_MAX seconds, back with
  a watch cache that starts at its current revision (kwatch's watches get 410 and relist);
- every FOLLOW_EVERY seconds a context is removed from the kubeconfig with
  `kubectl config delete-context`, and set again with `kubectl config set-context`
  FOLLOW_EVERY/2 seconds later (kwatch stops it, then it joins again);
- each minute: kwatch's RSS (VmRSS) and peak (VmHWM), its tasks (`kwatch_tasks` from
  `--metrics`), its open sockets (/proc/PID/fd), its CPU seconds, the events it printed
  and how many contexts are in the kubeconfig then.

At the end the churn stops, every context is back in the kubeconfig and every cluster
up, and each context's state as kwatch's output leaves it is compared with a LIST of it
(`GET /api/v1/pods` through kubectl), until all are equal or CONVERGE_SECS pass.

Writes benches/soak.tsv (one row a minute), benches/soak-summary.tsv and
docs/soak-rss.svg (the RSS curve), and prints the summary. Nothing here asserts a figure.

Environment: SOAK_MINUTES=120, SOAK_N=100, SOAK_PODS=200, SOAK_CHURN=1, SOAK_KILL_EVERY=120,
SOAK_DOWN_MIN=20, SOAK_DOWN_MAX=90, SOAK_FOLLOW_EVERY=600, SOAK_CONVERGE_SECS=300,
SOAK_SEED=7, CARGO_TARGET_DIR.
"""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = os.environ.get
MINUTES = float(ENV("SOAK_MINUTES", "120"))
N = int(ENV("SOAK_N", "100"))
PODS = int(ENV("SOAK_PODS", "200"))
CHURN = float(ENV("SOAK_CHURN", "1"))
KILL_EVERY = float(ENV("SOAK_KILL_EVERY", "120"))
DOWN_MIN = int(ENV("SOAK_DOWN_MIN", "20"))
DOWN_MAX = int(ENV("SOAK_DOWN_MAX", "90"))
FOLLOW_EVERY = float(ENV("SOAK_FOLLOW_EVERY", "600"))
CONVERGE_SECS = float(ENV("SOAK_CONVERGE_SECS", "300"))
SEED = int(ENV("SOAK_SEED", "7"))
DELTAS = {"Added", "Updated", "Deleted", "Replaced", "Sync", "ReplacedAll", "SyncAll"}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {msg}", file=sys.stderr, flush=True)


def kwatch_binary():
    if len(sys.argv) > 1:
        return os.path.realpath(sys.argv[1])
    target = ENV("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "--bin", "kwatch"],
        cwd=ROOT,
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=target),
    )
    return os.path.join(target, "release", "kwatch")


class Watched:
    """kwatch's stdout as a script reads it: each context's keys and resourceVersions."""

    def __init__(self, stdout):
        self.lock = threading.Lock()
        self.state = {}
        self.events = 0
        self.synced = set()
        self.lists = 0
        self.thread = threading.Thread(target=self.read, args=(stdout,), daemon=True)
        self.thread.start()

    def read(self, stdout):
        for line in stdout:
            rec = json.loads(line)
            kind, ctx = rec.get("type"), rec.get("context")
            with self.lock:
                if kind in DELTAS:
                    self.events += 1
                    mine = self.state.setdefault(ctx, {})
                    if kind == "Deleted":
                        mine.pop(rec["key"], None)
                    else:
                        mine[rec["key"]] = rec.get("resourceVersion")
                elif kind == "List":
                    self.lists += 1
                    # A new informer (the context joined, again): its first list is all.
                    if rec.get("reason") == "initial":
                        self.state[ctx] = {}
                elif kind == "Synced":
                    self.synced.add(ctx)

    def of(self, ctx):
        with self.lock:
            return dict(self.state.get(ctx, {}))


def main():
    random.seed(SEED)
    k = kwatch_binary()
    for tool in ["kubectl"]:
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed on PATH")
    work = tempfile.mkdtemp(prefix="kwatch-soak-")
    home = os.path.join(work, "home")
    os.makedirs(home)
    sim_kc = os.path.join(work, "sim-kc")
    kc = os.path.join(work, "kc")
    procs = []

    def cleanup(*_):
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run(k, work, home, sim_kc, kc, procs)
    finally:
        cleanup()


def kubectl(kc, *args, body=None):
    """kubectl with the simulator's kubeconfig; `body`: a file's content for `-f`."""
    cmd = ["kubectl", "--kubeconfig", kc, *args]
    if body is not None:
        cmd += ["-f", "-"]
    return subprocess.run(cmd, input=body, capture_output=True, text=True)


def control(sim_kc, ctx, path, body):
    out = kubectl(sim_kc, "--context", ctx, "create", "--raw", path, body=json.dumps(body))
    # A restart cuts every connection, the one that asked for it too.
    if out.returncode != 0 and not (path == "/_sim/restart" and "EOF" in out.stderr):
        log(f"{ctx} {path}: {out.stderr.strip()}")


def listed(sim_kc, ctx):
    out = kubectl(sim_kc, "--context", ctx, "get", "--raw", "/api/v1/pods")
    if out.returncode != 0:
        return None
    items = json.loads(out.stdout)["items"]
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in items}


def proc_status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sockets(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def tasks(metrics):
    try:
        body = urllib.request.urlopen(metrics + "/metrics", timeout=10).read().decode()
    except OSError:
        return -1
    m = re.search(r"^kwatch_tasks (\d+)", body, re.M)
    return int(m.group(1)) if m else -1


def run(k, work, home, sim_kc, kc, procs):
    contexts = [f"kwatch-sim-{i}" for i in range(1, N + 1)]
    log(f"starting {N} simulated clusters of {PODS} pods, churn {CHURN}/s each")
    sim_log = open(os.path.join(work, "sim.log"), "w")
    sim = subprocess.Popen(
        [k, "sim", "--clusters", str(N), "--objects", str(PODS), "--churn", str(CHURN),
         "--scenario", "steady", "--seed", str(SEED), "--write-kubeconfig", sim_kc],
        stdout=subprocess.DEVNULL, stderr=sim_log)
    procs.append(sim)
    while not (os.path.exists(sim_kc) and os.path.getsize(sim_kc) > 0):
        if sim.poll() is not None:
            sys.exit("the simulator did not start")
        time.sleep(0.1)
    time.sleep(0.5)
    shutil.copy(sim_kc, kc)
    env = dict(os.environ, KUBECONFIG=kc, HOME=home, NO_COLOR="1")
    err_path = os.path.join(work, "kwatch.err")
    err = open(err_path, "w")
    kw = subprocess.Popen(
        [k, "pods", "-A", "--all-contexts", "-o", "json", "--metrics", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=err, text=True, env=env, bufsize=1 << 20)
    procs.insert(0, kw)
    watched = Watched(kw.stdout)
    started = time.monotonic()
    metrics = None
    while metrics is None:
        if kw.poll() is not None:
            sys.exit("kwatch ended: " + open(err_path).read())
        m = re.search(r"metrics on (http://\S+)", open(err_path).read())
        metrics = m.group(1).rstrip("/").removesuffix("/metrics") if m else None
        time.sleep(0.1)
    while len(watched.synced) < N:
        if kw.poll() is not None:
            sys.exit("kwatch ended: " + open(err_path).read())
        time.sleep(0.1)
    sync_s = time.monotonic() - started
    log(f"every context synced after {sync_s:.1f} s; soaking for {MINUTES:g} min")

    rows = []
    down_until = {}
    removed = {}  # context -> when to set it again
    next_kill = started + KILL_EVERY
    next_follow = started + FOLLOW_EVERY
    next_sample = started
    end = started + MINUTES * 60
    restarts = follows = 0
    while True:
        now = time.monotonic()
        if now >= next_sample:
            minute = round((now - started) / 60)
            row = {
                "minute": minute,
                "rss_kib": proc_status(kw.pid, "VmRSS"),
                "peak_kib": proc_status(kw.pid, "VmHWM"),
                "tasks": tasks(metrics),
                "sockets": sockets(kw.pid),
                "cpu_s": round(cpu_seconds(kw.pid), 2),
                "events": watched.events,
                "contexts": N - len(removed),
                "down": sum(1 for t in down_until.values() if t > now),
            }
            rows.append(row)
            log(" ".join(f"{k}={v}" for k, v in row.items()))
            next_sample += 60
        if now >= end:
            break
        if kw.poll() is not None:
            sys.exit("kwatch ended: " + open(err_path).read()[-4000:])
        if now >= next_kill:
            ctx = random.choice([c for c in contexts if down_until.get(c, 0) < now])
            secs = random.randint(DOWN_MIN, DOWN_MAX)
            control(sim_kc, ctx, "/_sim/restart", {"seconds": secs})
            down_until[ctx] = now + secs
            restarts += 1
            next_kill += KILL_EVERY
        if now >= next_follow:
            ctx = random.choice([c for c in contexts if c not in removed])
            kubectl(kc, "config", "delete-context", ctx)
            removed[ctx] = now + FOLLOW_EVERY / 2
            follows += 1
            next_follow += FOLLOW_EVERY
        for ctx, back in list(removed.items()):
            if now >= back:
                kubectl(kc, "config", "set-context", ctx, f"--cluster={ctx}", f"--user={ctx}")
                del removed[ctx]
        time.sleep(1)

    log("the end: churn stopped, every context set again, waiting for every cluster")
    for ctx in contexts:
        control(sim_kc, ctx, "/_sim/churn", {"rate": 0})
    for ctx in list(removed):
        kubectl(kc, "config", "set-context", ctx, f"--cluster={ctx}", f"--user={ctx}")
    removed.clear()
    time.sleep(max([t - time.monotonic() for t in down_until.values()] + [0]))
    deadline = time.monotonic() + CONVERGE_SECS
    converged = set()
    while time.monotonic() < deadline and len(converged) < N:
        for ctx in contexts:
            if ctx in converged:
                continue
            want = listed(sim_kc, ctx)
            if want is not None and watched.of(ctx) == want:
                converged.add(ctx)
        time.sleep(2)
    took = CONVERGE_SECS - max(0.0, deadline - time.monotonic())
    differ = [c for c in contexts if c not in converged]
    final = {
        "rss_kib": proc_status(kw.pid, "VmRSS"),
        "tasks": tasks(metrics),
        "sockets": sockets(kw.pid),
    }
    kw.send_signal(signal.SIGINT)
    kw.wait(60)
    errlines = open(err_path).read().splitlines()

    after_sync = [r for r in rows if r["minute"] >= 5]
    summary = [
        ("clusters", N), ("pods_per_cluster", PODS), ("churn_per_cluster_per_s", CHURN),
        ("minutes", MINUTES), ("sync_s", round(sync_s, 1)),
        ("restarts", restarts), ("kubeconfig_removals", follows),
        ("events", watched.events), ("lists", watched.lists),
        ("rss_min_after_5min_kib", min(r["rss_kib"] for r in after_sync) if after_sync else 0),
        ("rss_max_after_5min_kib", max(r["rss_kib"] for r in after_sync) if after_sync else 0),
        ("rss_first_kib", rows[0]["rss_kib"]), ("rss_last_kib", rows[-1]["rss_kib"]),
        ("peak_rss_kib", rows[-1]["peak_kib"]),
        ("tasks_first", rows[0]["tasks"]), ("tasks_last", rows[-1]["tasks"]),
        ("tasks_end_all_up", final["tasks"]),
        ("sockets_first", rows[0]["sockets"]), ("sockets_end_all_up", final["sockets"]),
        ("cpu_s", rows[-1]["cpu_s"]),
        ("cpu_ms_per_event", round(1000 * rows[-1]["cpu_s"] / max(1, watched.events), 3)),
        ("converged", f"{len(converged)}/{N}"), ("converge_wait_s", round(took, 1)),
        ("not_converged", ",".join(differ) or "-"),
        ("joined_lines", sum(1 for l in errlines if re.match(r"~ context \S+ joined", l))),
        ("stopped_lines", sum(1 for l in errlines if "no longer in the kubeconfig" in l)),
    ]
    with open(os.path.join(ROOT, "benches", "soak.tsv"), "w") as f:
        cols = list(rows[0])
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(str(r[c]) for c in cols) + "\n")
    with open(os.path.join(ROOT, "benches", "soak-summary.tsv"), "w") as f:
        f.write("measure\tvalue\n")
        for name, value in summary:
            f.write(f"{name}\t{value}\n")
    svg(rows, os.path.join(ROOT, "docs", "soak-rss.svg"))
    for name, value in summary:
        print(f"{name:28} {value}")


def svg(rows, path):
    """The RSS curve (and the tasks) minute by minute, as a small SVG."""
    w, h, pad = 720, 260, 50
    xs = [r["minute"] for r in rows]
    rss = [r["rss_kib"] / 1024 for r in rows]
    top = max(rss) * 1.15 or 1
    right = max(xs) or 1

    def pt(x, y):
        return f"{pad + (w - 2 * pad) * x / right:.1f},{h - pad - (h - 2 * pad) * y / top:.1f}"

    line = " ".join(pt(x, y) for x, y in zip(xs, rss))
    ticks = []
    for i in range(5):
        y = top * i / 4
        ticks.append(f'<text x="{pad - 6}" y="{h - pad - (h - 2 * pad) * i / 4 + 4:.1f}" text-anchor="end">{y:.0f}</text>')
    for m in range(0, int(right) + 1, max(10, int(right) // 6 // 10 * 10 or 10)):
        ticks.append(f'<text x="{pad + (w - 2 * pad) * m / right:.1f}" y="{h - pad + 16}" text-anchor="middle">{m}</text>')
    doc = f"""<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{w / 2}" y="18" text-anchor="middle" font-size="13">kwatch RSS (MiB) by minute: {N} clusters of {PODS} pods, churn, restarts, kubeconfig changes</text>
<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>
<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>
{''.join(ticks)}
<text x="{w / 2}" y="{h - 12}" text-anchor="middle">minutes</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{line}"/>
</svg>
"""
    with open(path, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()

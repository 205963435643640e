"""Prints the table of scripts/gpu/bench.sh from what it left in its output folder."""
import glob
import json
import os
import statistics
import sys
from datetime import datetime


def load_jsonl(path):
    out = []
    for line in open(path):
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def busy_fraction(util_csv, t0, t1):
    vals = []
    for line in open(util_csv):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2:
            continue
        try:
            ts = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            vals.append((ts, float(parts[1])))
        except ValueError:
            continue
    window = [u for ts, u in vals if t0 <= ts <= t1] or [u for _, u in vals]
    return sum(window) / (100.0 * len(window)) if window else float("nan")


def cpu_busy(cpu_txt, t0, t1):
    """The busy share of all CPU cores between t0 and t1, from /proc/stat samples ("time cpu user nice system
    idle iowait irq softirq steal ...")."""
    samples = []
    for line in open(cpu_txt):
        parts = line.split()
        if len(parts) < 6 or parts[1] != "cpu":
            continue
        ticks = [int(x) for x in parts[2:]]
        samples.append((float(parts[0]), sum(ticks), ticks[3] + (ticks[4] if len(ticks) > 4 else 0)))
    window = [s for s in samples if t0 <= s[0] <= t1] or samples
    if len(window) < 2:
        return float("nan")
    total, idle = window[-1][1] - window[0][1], window[-1][2] - window[0][2]
    return 1.0 - idle / total if total > 0 else float("nan")


def main(out):
    copy = open(os.path.join(out, "copy.txt")).read().split()[1] if os.path.exists(os.path.join(out, "copy.txt")) else "nan"

    copy_gbps = float(copy)
    print(f"copy bandwidth: {copy_gbps:.0f} GB/s")
    print("\nfidelity: each baseline judged against itself (ratio = baseline time / the same kernel's time); "
          "goal within 1.00 +- 0.02 for kernels >= 10 us, +- 0.05 below")
    for path in sorted(glob.glob(os.path.join(out, "self-*.jsonl"))):
        name = os.path.basename(path)[5:-6]
        vs = [v for v in load_jsonl(path) if v.get("status") == "ok"]
        if not vs:
            print(f"  {name}: no ok verdicts")
            continue
        by_shape = {}
        for v in vs:
            for sh in v["shapes"]:
                by_shape.setdefault(json.dumps(sh["shape"]), []).append(sh)
        for key, rows in by_shape.items():
            ratios = sorted(r["speedup"] for r in rows)
            us = statistics.median(r["baseline_ms"] for r in rows) * 1000
            tol = 0.02 if us >= 10 else 0.05
            within = sum(1 for x in ratios if abs(x - 1) <= tol)
            print(f"  {name:13s} {key:42s} {us:8.1f} us {rows[0].get('method', ''):12s} n={len(ratios):2d} "
                  f"within +-{tol:.0%}: {within}/{len(ratios)}  ratios {' '.join(f'{x:.3f}' for x in ratios)}")
        walls = [v["stages"]["total_s"] for v in vs if "stages" in v]
        if walls:
            print(f"  {name:13s} evaluation wall: median {statistics.median(walls):.2f} s; workers "
                  f"{sorted({(v.get('workers') or {}).get('candidate', '?') for v in vs})}")
    print("\nthroughput (tuner; per min = judged candidates per minute between the first and the last verdict, "
          "i.e. once candidates are queued; lock = share of that time some candidate held the timing lock; "
          "compile s = the harness's compile stage, for Triton a syntax check: its JIT compile is inside correct s):")
    print(f"  {'spec':8s} {'judged':>6s} {'wall s':>6s} {'per min':>8s} {'GPU busy':>8s} {'CPU busy':>8s} {'lock':>5s} {'warm':>5s} "
          f"{'compile s':>9s} {'correct s':>9s} {'timing s':>8s} {'lock wait s':>11s} {'total s':>7s} {'best':>7s}")
    for run in sorted(glob.glob(os.path.join(out, "run-*"))):
        ex = os.path.basename(run)[4:]
        if not os.path.exists(os.path.join(run, "verdicts.jsonl")):
            continue
        t0, t1 = map(float, open(os.path.join(out, f"wall-{ex}.txt")).read().split())
        lines = [r for r in load_jsonl(os.path.join(run, "verdicts.jsonl")) if "verdict" in r]
        vs = [r["verdict"] for r in lines]
        done = sorted(r["finishedAt"] / 1000.0 for r in lines if r.get("finishedAt"))
        steady = (done[-1] - done[0]) if len(done) > 1 else float("nan")
        stages = [v.get("stages", {}) for v in vs]
        mean = lambda k: statistics.mean([s[k] for s in stages if k in s]) if any(k in s for s in stages) else float("nan")
        held = sum(s.get("timing_s", 0.0) for s in stages)
        warm = sum(1 for v in vs if (v.get("workers") or {}).get("candidate") == "warm")
        try:
            best = json.load(open(os.path.join(out, f"evolve-{ex}.json"))).get("best") or {}
        except ValueError:
            best = {}  # the run was stopped by its time limit
        util = os.path.join(out, f"util-{ex}.csv")
        busy = busy_fraction(util, done[0], done[-1]) if os.path.exists(util) and done else float("nan")
        cpu = os.path.join(out, f"cpu-{ex}.txt")
        cpus = cpu_busy(cpu, done[0], done[-1]) if os.path.exists(cpu) and done else float("nan")
        print(f"  {ex:8s} {len(vs):6d} {t1 - t0:6.0f} {(len(done) - 1) / (steady / 60):8.1f} {busy:8.0%} {cpus:8.0%} "
              f"{held / steady:5.0%} {warm:5d} {mean('compile_s'):9.2f} {mean('correctness_s'):9.2f} "
              f"{mean('timing_s'):8.2f} {mean('lock_wait_s'):11.2f} {mean('total_s'):7.2f} "
              f"{best.get('speedup', float('nan')):6.2f}x")
        statuses = {}
        for v in vs:
            statuses[v["status"]] = statuses.get(v["status"], 0) + 1
        print(f"    verdicts: {statuses}; best {best.get('id')} confirmed {best.get('confirmed')}")
        # the rate over the run, and what its slowest candidates cost: a search that runs out of settings ends
        # on its far corners (launches many times slower than the baseline, the slowest to time) and drains
        try:
            ended = json.load(open(os.path.join(run, "run.json"))).get("reason", "?")
        except (OSError, ValueError):
            ended = "?"
        windows = [0] * (int((done[-1] - done[0]) // 20) + 1) if done else []
        for t in done:
            windows[int((t - done[0]) // 20)] += 1
        far = [v for v in vs if v.get("status") == "ok" and v.get("speedup", 1.0) < 0.5]
        far_held = sum((v.get("stages") or {}).get("timing_s", 0.0) for v in far)
        stops = [s for v in vs for sh in v.get("shapes") or [] for s in sh.get("stops") or []]
        print(f"    verdicts per 20 s from the first: {' '.join(map(str, windows))}; the run ended: {ended}; "
              f"under 0.5x the baseline: {len(far)} candidates, {far_held / held if held else 0:.0%} of the lock "
              f"held; timed passes that stopped far below: {stops.count('far below')} of {len(stops)}")
        for status in sorted(statuses):
            if status != "ok":  # the first reason of each other kind, as the user would read it
                first = next(v for v in vs if v["status"] == status)
                print(f"      {status}, e.g.: {str(first.get('reason', ''))[:240]}")
        phases = [k for k in ("timing_setup_s", "timing_capture_s", "timing_rounds_s", "timing_evidence_s")
                  if any(k in st for st in stages)]
        if phases:
            print("    the timed section per candidate, by phase (mean s, the worker's account): "
                  + ", ".join(f"{k[7:-2]} {mean(k):.3f}" for k in phases))
        if any("precompile_s" in st for st in stages):
            print(f"    first calls (mean s): {mean('precompile_s'):.3f}, in correct s (Triton's compiles); shapes "
                  f"timed again {sum(st.get('retimed_shapes', 0) for st in stages) / max(1, len(stages)):.2f} a "
                  f"candidate")
        waits = [k for k in ("reference_wait_correctness_s", "verify_s", "reference_wait_verify_s")
                 if any(k in st for st in stages)]
        if waits:
            print("    checking (mean s): " + ", ".join(
                f"{k[:-2].replace('_', ' ')} {mean(k):.3f}" for k in waits)
                + " (a reference wait: the judge blocked on the reference process's answers; verify: after the lock)")
        print(f"    from asking for the first calls to the candidate loaded (mean s): "
              f"{mean('first_calls_start_s'):.3f}; medians: first calls "
              f"{statistics.median([st.get('precompile_s', 0) for st in stages] or [0]):.3f}, correct s "
              f"{statistics.median([st.get('correctness_s', 0) for st in stages] or [0]):.3f}, total s "
              f"{statistics.median([st.get('total_s', 0) for st in stages] or [0]):.3f}")
        taken = [(v.get("compile") or {}).get("from_store") for v in vs]
        taken = [n for n in taken if n is not None]
        if taken:
            print(f"    kernels taken from the host's store instead of compiled: {sum(taken) / len(taken):.2f} a "
                  f"candidate ({sum(taken)} in {len(taken)} evaluations)")
        # the per-shape tables (the run's last verdicts are its closing tables'): their first calls (their launches
        # from the host's store, 2026-12-05), their waits at the lock beside the confirmations judged early (which go
        # in the background), and when each verdict came
        tables = []
        for f in sorted(glob.glob(os.path.join(run, "candidates", "c*.json"))):
            try:
                c = json.load(open(f))
            except ValueError:
                continue
            if c.get("mode") == "dispatch" and c.get("verdict"):
                tables.append(c)
        at = {r["id"]: r["finishedAt"] / 1000.0 for r in lines if r.get("finishedAt")}
        for c in tables:
            st = c["verdict"].get("stages") or {}
            print(f"    table {c['id']}: verdict at {at.get(c['id'], float('nan')) - done[0]:.1f} s from the first, "
                  f"total {st.get('total_s', float('nan')):.2f} s, first calls {st.get('precompile_s', float('nan')):.2f}"
                  f" s, kernels from the store {(c['verdict'].get('compile') or {}).get('from_store')}, lock wait "
                  f"{st.get('lock_wait_s', float('nan')):.2f} s")
        confirmations = [r["confirmation"] for r in load_jsonl(os.path.join(run, "verdicts.jsonl")) if "confirmation" in r]
        if confirmations:
            cw = [(v.get("stages") or {}).get("lock_wait_s", 0.0) for v in confirmations]
            print(f"    confirmations: {len(cw)}, lock wait mean {statistics.mean(cw):.2f} s, max {max(cw):.2f} s")
        rebuilt = [(v.get("compile") or {}).get("baseline_compiled") for v in vs]
        rebuilt = [n for n in rebuilt if n is not None]
        if rebuilt:
            print(f"    the baseline compiled in the candidate's worker: in {sum(1 for n in rebuilt if n)} of "
                  f"{len(rebuilt)} evaluations ({sum(rebuilt)} kernels; 0 when the reference's cache served it)")
        roles = os.path.join(out, f"roles-{ex}.json")
        if os.path.exists(roles) and vs:
            data = json.load(open(roles))
            # Counted once: the server's children are the workers and the engine's the judges (both counted as
            # themselves); a worker's children (the compiler's processes) by the worker's reaped-children time,
            # which is exact, while "worker: ptxas" is what sampling saw of them (short ones are missed).
            cpu_s = {k: v for k, v in data["cpu_s"].items()
                     if k not in ("warm-worker server (its children)", "engine (node) (its children)") and ": " not in k}
            sampled = {k: v for k, v in data["cpu_s"].items() if ": " in k}
            print(f"    CPU seconds per judged candidate, by role (whole run, {sum(cpu_s.values()) / len(vs):.2f} s "
                  f"in all): " + ", ".join(f"{k} {v / len(vs):.2f}" for k, v in
                                           sorted(cpu_s.items(), key=lambda kv: -kv[1]) if v / len(vs) >= 0.01))
            if sampled:
                print("      of the children, seen by sampling: " + ", ".join(
                    f"{k} {v / len(vs):.2f}" for k, v in sorted(sampled.items(), key=lambda kv: -kv[1])
                    if v / len(vs) >= 0.01))
        if ex == "softmax" and best.get("id"):
            cand = json.load(open(os.path.join(run, "candidates", best["id"] + ".json")))
            print(f"    best knobs: {cand.get('knobs')}")
            shapes = (cand.get("verdict") or {}).get("shapes") or []
            for s in shapes:
                sh = s["shape"]
                nbytes = 2 * 4 * sh["rows"] * sh["cols"]  # float32 in and out
                gbps = nbytes / (s["candidate_ms"] * 1e6)
                print(f"    best softmax on {sh}: {s['candidate_ms'] * 1000:.1f} us, {gbps:.0f} GB/s = "
                      f"{gbps / copy_gbps:.0%} of the copy bandwidth")


if __name__ == "__main__":
    main(sys.argv[1])

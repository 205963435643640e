"""Prints the table of scripts/gpu/bench.sh from what it left in its output folder."""
import glob
import json
import math
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


def main(out):
    copy = open(os.path.join(out, "copy.txt")).read().split()[1] if os.path.exists(os.path.join(out, "copy.txt")) else "nan"
    copy_gbps = float(copy)
    print(f"copy bandwidth: {copy_gbps:.0f} GB/s")
    print("\nfidelity (baseline judged against itself):")
    for path in sorted(glob.glob(os.path.join(out, "self-*.jsonl"))):
        vs = [v for v in load_jsonl(path) if v.get("status") == "ok"]
        ratios = sorted(s["speedup"] for v in vs for s in v["shapes"])
        if not ratios:
            print(f"  {os.path.basename(path)}: no ok verdicts")
            continue
        kernel_us = sorted(s["baseline_ms"] * 1000 for v in vs for s in v["shapes"])
        print(f"  {os.path.basename(path)[5:-6]:14s} n={len(ratios):3d} per-shape ratio min {ratios[0]:.3f} "
              f"median {statistics.median(ratios):.3f} max {ratios[-1]:.3f}; kernels {kernel_us[0]:.1f}-{kernel_us[-1]:.1f} us; "
              f"methods {sorted({s.get('method', '') for v in vs for s in v['shapes']})}")
    print("\nthroughput (tuner):")
    print(f"  {'spec':8s} {'judged':>6s} {'per min':>8s} {'GPU busy':>8s} {'compile s':>9s} {'correct s':>9s} {'timing s':>8s} {'lock wait s':>11s} {'best':>7s}")
    for ex in ("softmax", "matmul"):
        run = os.path.join(out, f"run-{ex}")
        if not os.path.exists(os.path.join(run, "verdicts.jsonl")):
            continue
        t0, t1 = map(float, open(os.path.join(out, f"wall-{ex}.txt")).read().split())
        vs = [r["verdict"] for r in load_jsonl(os.path.join(run, "verdicts.jsonl")) if "verdict" in r]
        stages = [v.get("stages", {}) for v in vs]
        mean = lambda k: statistics.mean([s[k] for s in stages if k in s]) if any(k in s for s in stages) else float("nan")
        best = json.load(open(os.path.join(out, f"evolve-{ex}.json"))).get("best") or {}
        busy = busy_fraction(os.path.join(out, f"util-{ex}.csv"), t0, t1)
        print(f"  {ex:8s} {len(vs):6d} {len(vs) / ((t1 - t0) / 60):8.1f} {busy:8.0%} {mean('compile_s'):9.2f} "
              f"{mean('correctness_s'):9.2f} {mean('timing_s'):8.2f} {mean('lock_wait_s'):11.2f} {best.get('speedup', float('nan')):6.2f}x")
        if ex == "softmax" and best.get("id"):
            cand = json.load(open(os.path.join(run, "candidates", best["id"] + ".json")))
            shapes = (cand.get("verdict") or {}).get("shapes") or []
            for s in shapes:
                sh = s["shape"]
                nbytes = 2 * 4 * sh["rows"] * sh["cols"]  # float32 in and out
                gbps = nbytes / (s["candidate_ms"] * 1e6)
                print(f"    best softmax on {sh}: {gbps:.0f} GB/s = {gbps / copy_gbps:.0%} of the copy bandwidth")


if __name__ == "__main__":
    main(sys.argv[1])

"""One summary of a level self-judged by `kernelevolve suite --self-judge` over several device calls (a shard a
call): each call's suite.json together, the last row of each problem kept.

Usage: python3 scripts/gpu/suite_summary.py SUITE.json [SUITE.json ...]
Prints: problems by status, how many read within 1.00 +- 0.03 (and those that do not), the geometric mean and range
of the ok ones, the problems judged with a larger share or alone (and why), the wall time of the sessions added up
(each shard's `kernelevolve suite` from start to table) and the slowest ten.
"""
import json
import math
import os
import sys

TOLERANCE = 0.03


def main(paths):
    rows, sessions = {}, []
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        sessions.append(data.get("session", {}).get("elapsedSeconds", 0.0))
        for r in data.get("problems", []):
            rows[r["problem"]] = r
    counts = {}
    for r in rows.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    ok = [r for r in rows.values() if r["status"] == "ok" and isinstance(r.get("speedup"), (int, float))]
    outside = [r for r in ok if abs(r["speedup"] - 1) > TOLERANCE]
    print(f"{len(rows)} problems: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    print(f"within 1.00 +- {TOLERANCE:.2f}: {len(ok) - len(outside)} of {len(rows)}")
    for r in outside:
        print(f"  outside: {r['problem']} {r['speedup']:.3f}x")
    for r in rows.values():
        if r["status"] != "ok":
            print(f"  {r['problem']}: {r['status']}: {r.get('reason', '')[:200]}")
    if ok:
        logs = [math.log(r["speedup"]) for r in ok]
        print(f"speedups of the ok ones: geometric mean {math.exp(sum(logs) / len(logs)):.3f}, "
              f"min {min(r['speedup'] for r in ok):.3f}, max {max(r['speedup'] for r in ok):.3f}")
    moved = [r for r in rows.values() if r.get("reason", "").startswith("judged ")]
    print(f"judged with a larger share or alone: {len(moved)}")
    for r in moved:
        print(f"  {r['problem']}: {r['reason'].split(';')[0]}"
              + (f" ({r['speedup']:.3f}x)" if isinstance(r.get("speedup"), (int, float)) else ""))
    print(f"total wall time {sum(sessions):.0f} s ({sum(sessions) / 60:.1f} min) over {len(sessions)} session(s): "
          + ", ".join(f"{s:.0f} s" for s in sessions)
          + f"; the evaluations' own {sum(r.get('evalSeconds', 0) for r in rows.values()):.0f} s")
    clean = []  # the baseline's worker/clean-process ratio per shape (clean_baseline.py), from each verdict.json
    for p in paths:
        folder = os.path.dirname(os.path.abspath(p))
        for name in rows:
            path = os.path.join(folder, name, "verdict.json")
            if os.path.exists(path):
                try:
                    with open(path) as f:
                        v = json.load(f)
                except (OSError, ValueError):
                    continue
                clean += [r["ratio"] for r in ((v.get("timing") or {}).get("clean_baseline") or []) if "ratio" in r]
    if clean:
        clean.sort()
        print(f"the baseline in the worker against a clean process, {len(clean)} shapes: min {clean[0]:.3f}, "
              f"median {clean[len(clean) // 2]:.3f}, max {clean[-1]:.3f}")
    print("slowest ten:")
    for r in sorted(rows.values(), key=lambda r: -r.get("wallSeconds", 0))[:10]:
        print(f"  {r['problem']:<70} {r.get('wallSeconds', 0):6.1f} s  {r['status']}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Self-judgements summarized (scripts/gpu/parts/i17-fidelity.sh): RAWDIR/<kernel>/<run>.json are verdicts of a
baseline judged against itself. Per kernel: each run's geometric mean, the worst deviation from 1.00 of a shape
whose baseline takes >= 10 us, and whether every reported interval (the geometric mean's and each shape's)
covers 1.00; against the goals: every geometric mean within 1.00 +- 0.02, every shape >= 10 us within +- 0.03.
Then the same as the table of docs/benchmarks.md (markdown), with the rounds set aside because a launch was still
being queued when its timing began (stages.host_waits) and the shapes whose every launch was (host_bound_shapes).
Usage: python3 scripts/gpu/fidelity_summary.py RAWDIR"""
import json
import os
import sys
from typing import Any, Dict, List


def covers(iv: Any) -> bool:
    return isinstance(iv, list) and len(iv) == 2 and iv[0] <= 1.0 <= iv[1]


def kernel_lines(name: str, verdicts: List[Dict[str, Any]], table: List[str]) -> List[str]:
    ok = [v for v in verdicts if v.get("status") == "ok"]
    bad = [v for v in verdicts if v.get("status") != "ok"]
    means = [v["speedup"] for v in ok]
    shapes = [s for v in ok for s in v.get("shapes", []) if s.get("baseline_ms", 0) >= 0.01]
    worst = max(shapes, key=lambda s: abs(s["speedup"] - 1.0), default=None)
    intervals = [v.get("speedup_interval") for v in ok] + [s.get("interval") for v in ok for s in v.get("shapes", [])]
    uncovered = sum(1 for iv in intervals if not covers(iv))
    retimed = sum(int(v.get("stages", {}).get("retimed_shapes", 0)) for v in ok)
    mean_ok = all(abs(m - 1.0) <= 0.02 for m in means)
    shape_ok = worst is None or abs(worst["speedup"] - 1.0) <= 0.03
    lines = [f"{name}: {len(ok)}/{len(verdicts)} runs ok; geometric means " + " ".join(f"{m:.3f}" for m in means)]
    if worst is not None:
        where = " ".join(f"{k}={x}" for k, x in worst["shape"].items())
        lines.append(f"  worst shape >= 10 us: {worst['speedup']:.3f} ({where}, {worst['baseline_ms'] * 1000:.1f} us)")
    else:
        lines.append("  no shape >= 10 us")
    lines.append(f"  intervals covering 1.00: {len(intervals) - uncovered}/{len(intervals)}; shapes re-timed: {retimed}")
    lines.append(f"  goals: means within 1.00 +- 0.02 {'met' if mean_ok and means else 'NOT met'}; "
                 f"shapes >= 10 us within +- 0.03 {'met' if shape_ok and means else 'NOT met'}; "
                 f"every interval covers 1.00 {'yes' if not uncovered and intervals else 'no'}")
    waits = sum(int(v.get("stages", {}).get("host_waits", 0)) for v in ok)
    host_bound = sum(int(v.get("stages", {}).get("host_bound_shapes", 0)) for v in ok)
    lines.append(f"  rounds set aside (launch still queued at the timing start): {waits}; shapes host-bound throughout: "
                 f"{host_bound}")
    for v in bad[:3]:
        lines.append(f"  {v.get('status')}: {str(v.get('reason', ''))[:160]}")
    worst_cell = "-"
    if worst is not None:
        worst_cell = (f"{worst['speedup']:.3f} ({'x'.join(str(x) for x in worst['shape'].values())}, "
                      f"{worst['baseline_ms'] * 1000:.1f} us)")
    mean_cell = "met" if mean_ok and means else f"not met ({sum(abs(m - 1.0) > 0.02 for m in means)} of {len(means)})"
    table.append(f"| {name} | {' '.join(f'{m:.3f}' for m in means)}{f' ({len(bad)} not ok)' if bad else ''} | "
                 f"{worst_cell} | {len(intervals) - uncovered}/{len(intervals)} | {retimed} | {waits} | {mean_cell} / "
                 f"{'met' if shape_ok and means else 'not met'} / {'met' if not uncovered and intervals else 'not met'} |")
    return lines


def main(raw: str) -> int:
    out: List[str] = []
    table = ["| kernel | geometric means | worst shape >= 10 us | intervals covering 1.00 | shapes re-timed | "
             "rounds set aside | goals (means +-0.02 / shapes +-0.03 / intervals) |",
             "|---|---|---|---|---:|---:|---|"]
    for name in sorted(os.listdir(raw)):
        folder = os.path.join(raw, name)
        if not os.path.isdir(folder):
            continue
        verdicts = []
        for f in sorted(os.listdir(folder)):
            if f.endswith(".json"):
                try:
                    with open(os.path.join(folder, f)) as fh:
                        verdicts.append(json.loads(fh.read().strip().splitlines()[-1]))
                except (OSError, ValueError, IndexError):
                    verdicts.append({"status": "no verdict", "reason": f"{f} holds no verdict"})
        if verdicts:
            out.extend(kernel_lines(name, verdicts, table))
    print("\n".join(out + [""] + table) if out else f"no verdicts under {raw}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

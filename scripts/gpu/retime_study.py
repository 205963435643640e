"""What the judge's re-timing buys and costs, from verdicts that carry every pass's samples
(KERNELEVOLVE_VERDICT_PASSES=1): for each verdict, the shapes its first passes would have had timed again and why
(an interval wider than the goal, or a ratio that disagrees with the other shapes'), and what the verdict would
have read from its first passes alone beside what it read. On self-judgements (a kernel against itself, every
ratio 1.00 in truth) the second table is the fidelity each way.

    python3 scripts/gpu/retime_study.py FILE.jsonl... [--self]

FILE: verdicts, one JSON object a line (an evaluate's --json, or a run's verdicts.jsonl), found wherever they sit
in each object; the table groups them by the folder each file is in. --self: the files are self-judgements.
"""
from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Dict, Iterator, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness"))
from kernelevolve_harness.ratios import disagreeing, intervals, median, shape_estimate, wide  # noqa: E402
from kernelevolve_harness.timing_settings import TimingSettings  # noqa: E402


def verdicts(obj: Any) -> Iterator[Dict[str, Any]]:
    if isinstance(obj, dict):
        if isinstance(obj.get("timing"), dict) and obj["timing"].get("passes"):
            yield obj
            return
        for v in obj.values():
            yield from verdicts(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from verdicts(v)


def as_pass(h: Dict[str, Any]) -> Tuple[List[float], List[float], List[int]]:
    s = h["samples"]
    return s["baseline"], s["candidate"], h.get("buffer_sets") or []


def read(shapes: List[List[Tuple[Any, ...]]]) -> Tuple[List[float], List[Tuple[float, float]], float, List[float]]:
    """Ratios, intervals, geometric mean and baseline times (ms) of shapes given as lists of passes."""
    ratios, base = [], []
    for passes in shapes:
        b, c = shape_estimate(passes, median)
        ratios.append(b / c if c > 0 else float("inf"))
        base.append(b)
    ivs, _ = intervals(shapes, median)
    gm = math.exp(sum(math.log(max(r, 1e-12)) for r in ratios) / len(ratios))
    return ratios, ivs, gm, base


def study(v: Dict[str, Any], s: TimingSettings) -> Dict[str, Any]:
    received = [[as_pass(h) for h in passes] for passes in v["timing"]["passes"]]
    graph = [all(h.get("timer") == "cuda-graph" for h in passes) for passes in v["timing"]["passes"]]
    goals = [s.ratio_goal_short if g else s.ratio_goal for g in graph]
    first = [p[:1] for p in received]
    r1, iv1, gm1, base = read(first)
    wide1 = {k for k in range(len(first)) if wide(iv1[k], r1[k], goals[k])}
    apart1 = set(disagreeing(r1, iv1, goals))
    r, iv, gm, _ = read(received)
    return {"wide": wide1, "disagree": apart1, "retimed": sum(len(p) - 1 for p in received),
            "first": (r1, iv1, gm1), "final": (r, iv, gm), "base_ms": base, "graph": graph}


def main(argv: List[str]) -> int:
    selfjudged = "--self" in argv
    files = [a for a in argv if a != "--self"]
    s = TimingSettings.from_env(True)
    rows: List[Dict[str, Any]] = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                for v in verdicts(obj):
                    rows.append(dict(study(v, s), file=os.path.basename(os.path.dirname(os.path.abspath(path)))))
    if not rows:
        print("no verdicts with passes (run with KERNELEVOLVE_VERDICT_PASSES=1)")
        return 1
    n = len(rows)
    shapes = sum(len(r["graph"]) for r in rows)
    only_wide = sum(len(r["wide"] - r["disagree"]) for r in rows)
    only_apart = sum(len(r["disagree"] - r["wide"]) for r in rows)
    both = sum(len(r["wide"] & r["disagree"]) for r in rows)
    print(f"{n} verdicts, {shapes} shapes; passes timed again {sum(r['retimed'] for r in rows)} "
          f"({sum(r['retimed'] for r in rows) / n:.2f} a verdict)")
    print(f"shapes the first passes flag: wide only {only_wide}, disagreeing only {only_apart}, both {both}")
    graph_flags = sum(1 for r in rows for k in r["wide"] | r["disagree"] if r["graph"][k])
    print(f"  of them timed as CUDA graphs: {graph_flags}")
    if not selfjudged:
        return 0
    print("\nself-judgements, the first passes alone beside the verdict as judged (every true ratio 1.00):")
    print(f"{'file':32} {'worst gm (first/final)':>24} {'worst shape >=10us':>22} {'covering 1.00':>16}")
    by: Dict[str, List[Dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["file"], []).append(r)
    for name, rs in sorted(by.items()):
        out = []
        for key in ("first", "final"):
            gms = [r[key][2] for r in rs]
            worst_gm = max(gms, key=lambda g: abs(math.log(g)))
            long = [r[key][0][k] for r in rs for k in range(len(r["graph"])) if r["base_ms"][k] >= 0.010]
            worst = max(long, key=lambda x: abs(math.log(max(x, 1e-12))), default=float("nan"))
            cover = sum(1 for r in rs for lo, hi in r[key][1] if lo <= 1.0 <= hi)
            total = sum(len(r[key][1]) for r in rs)
            out.append((worst_gm, worst, cover, total))
        (g1, w1, c1, t1), (g2, w2, c2, t2) = out
        print(f"{name:32} {g1:11.3f} / {g2:.3f} {w1:13.3f} / {w2:.3f} {c1:7d}/{t1} / {c2}/{t2}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

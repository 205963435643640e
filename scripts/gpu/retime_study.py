"""What the judge's re-timing buys and costs, from verdicts that carry every pass's samples
(KERNELEVOLVE_VERDICT_PASSES=1): for each verdict, the shapes whose first pass's interval is wider than their goal,
those of them another pass can bring within it (ratios.worth_retiming: what the judge times again), how far the
passes that followed moved a shape's ratio, and what the verdict would have read from its first passes alone
beside what it read. On self-judgements (a kernel against itself, every
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
from kernelevolve_harness.ratios import intervals, median, shape_estimate, wide, worth_retiming  # noqa: E402
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


def as_pass(h: Dict[str, Any]) -> Tuple[List[float], List[float], List[int], List[int]]:
    s = h["samples"]
    return s["baseline"], s["candidate"], h.get("buffer_sets") or [], h.get("orders") or []


def read(shapes: List[List[Tuple[Any, ...]]], kinds: List[str]) -> Tuple[List[float], List[Tuple[float, float]], float,
                                                                         List[float]]:
    """Ratios, intervals, geometric mean and baseline times (ms) of shapes given as lists of passes (kinds: each
    shape's timer, as the judge pools them)."""
    ratios, base = [], []
    for passes in shapes:
        b, c = shape_estimate(passes, median)
        ratios.append(b / c if c > 0 else float("inf"))
        base.append(b)
    ivs, _ = intervals(shapes, median, kinds=kinds)
    gm = math.exp(sum(math.log(max(r, 1e-12)) for r in ratios) / len(ratios))
    return ratios, ivs, gm, base


def study(v: Dict[str, Any], s: TimingSettings) -> Dict[str, Any]:
    received = [[as_pass(h) for h in passes] for passes in v["timing"]["passes"]]
    graph = [all(h.get("timer") == "cuda-graph" for h in passes) for passes in v["timing"]["passes"]]
    goals = [s.ratio_goal_short if g else s.ratio_goal for g in graph]
    first = [p[:1] for p in received]
    kinds = [str(passes[0].get("timer", "")) for passes in v["timing"]["passes"]]
    r1, iv1, gm1, base = read(first, kinds)
    wide1 = {k for k in range(len(first)) if wide(iv1[k], r1[k], goals[k])}
    reach1 = {k for k in range(len(first)) if worth_retiming(iv1[k], r1[k], goals[k], s.retime_reach)}
    r, iv, gm, _ = read(received, kinds)
    moved = [abs(math.log(max(r[k], 1e-12) / max(r1[k], 1e-12))) for k in range(len(first)) if len(received[k]) > 1]
    return {"wide": wide1, "reach": reach1, "retimed": sum(len(p) - 1 for p in received), "moved": moved,
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
    flagged = sum(len(r["wide"]) for r in rows)
    reach = sum(len(r["reach"]) for r in rows)
    moved = sorted(x for r in rows for x in r["moved"])
    print(f"{n} verdicts, {shapes} shapes; passes timed again {sum(r['retimed'] for r in rows)} "
          f"({sum(r['retimed'] for r in rows) / n:.2f} a verdict)")
    print(f"first passes wider than their goal: {flagged} shapes (of them timed as CUDA graphs: "
          f"{sum(1 for r in rows for k in r['wide'] if r['graph'][k])}); within reach of it: {reach}")
    if moved:
        at = lambda q: math.exp(moved[min(len(moved) - 1, int(q * len(moved)))]) - 1  # noqa: E731
        print(f"the passes that followed moved a shape's ratio by {at(0.5):.2%} (median), {at(0.9):.2%} (90th "
              f"percentile), {math.exp(moved[-1]) - 1:.2%} at most, over {len(moved)} shapes")
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

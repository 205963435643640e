"""A shape's speedup as a paired ratio, and how sure it is.

Baseline and candidate are timed in interleaved rounds (ABBA), so round r's two samples were taken side by side
under the same conditions. A pass is one timed section of a shape: its rounds' samples for both kernels. The
pass's ratio is estimate(baseline) / estimate(candidate) (the median on a GPU, the lower quartile on a CPU); a
shape timed in several passes (re-timed because its interval was wide or it disagreed with the other shapes)
combines them as the geometric mean of two passes' ratios, or the median of three or more (one pass that caught
the device in another state is outvoted). The interval is a percentile bootstrap over rounds: each resample
draws whole rounds (both kernels' samples of a round together, which keeps the pairing) within every pass.
"""
from __future__ import annotations

import math
import random
from typing import Callable, List, Sequence, Tuple

Estimator = Callable[[Sequence[float]], float]
Pass = Tuple[Sequence[float], Sequence[float]]  # (baseline samples, candidate samples), index = round

BOOTSTRAP = 400
LEVEL = 0.95


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def lower_quartile(xs: Sequence[float]) -> float:
    """CPU samples: other processes only ever add time (preemption), so the lower quartile estimates the
    kernel's own time better than the median on a shared machine, while ignoring lucky outliers."""
    s = sorted(xs)
    return s[(len(s) - 1) // 4]


def _ratio(b: float, c: float) -> float:
    return b / c if c > 0 else float("inf")


def combine(passes: List[Tuple[float, float]]) -> Tuple[float, float]:
    """(baseline_ms, candidate_ms) of a shape from each pass's two estimates, such that their quotient is the
    shape's ratio: geometric means for one or two passes, the pass of median ratio for three or more."""
    if len(passes) >= 3:
        ordered = sorted(passes, key=lambda p: _ratio(*p))
        return ordered[len(ordered) // 2]
    b = math.exp(sum(math.log(max(p[0], 1e-12)) for p in passes) / len(passes))
    c = math.exp(sum(math.log(max(p[1], 1e-12)) for p in passes) / len(passes))
    return b, c


def shape_estimate(passes: Sequence[Pass], estimate: Estimator) -> Tuple[float, float]:
    return combine([(estimate(b), estimate(c)) for b, c in passes])


def _resample(passes: Sequence[Pass], rng: random.Random) -> List[Pass]:
    out = []
    for b, c in passes:
        n = min(len(b), len(c))
        idx = [rng.randrange(n) for _ in range(n)]
        out.append(([b[k] for k in idx], [c[k] for k in idx]))
    return out


def _percentiles(xs: List[float]) -> Tuple[float, float]:
    s = sorted(xs)
    tail = (1.0 - LEVEL) / 2
    lo = s[max(0, int(math.floor(tail * len(s))))]
    hi = s[min(len(s) - 1, int(math.ceil((1.0 - tail) * len(s))) - 1)]
    return lo, hi


def intervals(shapes: Sequence[Sequence[Pass]], estimate: Estimator,
              rounds: int = BOOTSTRAP) -> Tuple[List[Tuple[float, float]], Tuple[float, float]]:
    """Each shape's interval and the geometric mean's, from the same resamples (seeded by nothing but the
    samples, so a verdict's interval follows from its samples)."""
    rng = random.Random(repr([[len(b) for b, _ in s] for s in shapes]))
    per_shape: List[List[float]] = [[] for _ in shapes]
    overall: List[float] = []
    for _ in range(rounds):
        logs = 0.0
        for k, passes in enumerate(shapes):
            if min(len(b) for b, _ in passes) < 2:
                r = _ratio(*shape_estimate(passes, estimate))
            else:
                r = _ratio(*shape_estimate(_resample(passes, rng), estimate))
            per_shape[k].append(r)
            logs += math.log(max(r, 1e-12))
        overall.append(math.exp(logs / max(1, len(shapes))))
    return [_percentiles(xs) for xs in per_shape], _percentiles(overall)


def wide(interval: Tuple[float, float], ratio: float, goal: float) -> bool:
    """Wider than the goal: an end further than goal (relative) from the ratio."""
    lo, hi = interval
    return ratio > 0 and (hi > ratio * (1 + goal) or lo < ratio * (1 - goal))


def disagreeing(ratios: List[float], shape_intervals: List[Tuple[float, float]], goal: float) -> List[int]:
    """Shapes whose ratio is further than 2 x goal from the median of the others' and whose interval does not
    reach it: a pass that may have caught the device (or the machine) in another state."""
    out = []
    if len(ratios) < 3:
        return out
    for k, r in enumerate(ratios):
        others = median([x for j, x in enumerate(ratios) if j != k])
        lo, hi = shape_intervals[k]
        if abs(math.log(max(r, 1e-12) / max(others, 1e-12))) > math.log(1 + 2 * goal) and not lo <= others <= hi:
            out.append(k)
    return out


def apart(a: Tuple[float, float], b: Tuple[float, float]) -> bool:
    """Two intervals that do not overlap: two passes of a shape that disagree."""
    return a[1] < b[0] or b[1] < a[0]

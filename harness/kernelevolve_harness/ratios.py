"""A shape's speedup as a paired ratio, and how sure it is.

Baseline and candidate are timed in interleaved rounds, so round r's two samples were taken side by side under the
same conditions. A pass is one timed section of a shape: its rounds' samples for both kernels, on a GPU the buffer
set each round ran in (the worker turns through a few sets, shared by both kernels), and the order of each round
(which kernel ran first). The pass's ratio is estimate(baseline) / estimate(candidate) (the median on a GPU, the
lower quartile on a CPU), each kernel's estimate the geometric mean of its estimates in the rounds of either order:
the kernel that runs second in a round can take longer (17-23% on one softmax shape on an H200, 1-3% on RMSNorms,
2% less on another softmax; docs/benchmarks.md, "What the timing corrects"), and an estimate over rounds of both
orders mixed lands anywhere between the two orders' readings, wherever one order has a few rounds more. A shape
timed in several passes (re-timed because its interval was wider than its goal and within reach of it) combines
them as the geometric mean of two passes' ratios, or the median of three or more (one pass that caught the device
in another state is outvoted).

The interval has three parts, and is the hull of the bootstrap's and the other two's:
- within: a percentile bootstrap over rounds; each resample draws whole rounds (both kernels' samples of a round
  together, which keeps the pairing) within every stratum (a pass's rounds in one buffer set and one order);
- between: clusters differ by more than their rounds say (where a buffer lies in device memory, the state the
  device or the machine was in during a pass). Each cluster's own log-ratio (a pass's rounds in one buffer set,
  both orders balanced) scatters around its shape's; that scatter, pooled over the evaluation's shapes timed the
  same way, is a cluster's whole variance (within and between), so a shape of k clusters is known to within
  t * s / sqrt(k) (Student's t on the pooled degrees of freedom, at least 2; with fewer clusters than that, the
  bootstrap alone answers, and the verdict's re-timing adds passes);
- order: half the difference between the two orders' log-ratios, less what the rounds' own scatter puts there (its
  variance over the bootstrap's resamples): which kernel ran before it changes a kernel's time, and a user's
  program may run it after anything, so the interval reaches both orders' readings where they truly differ.
The second and third add in quadrature.
A self-judgement read 0.888 on one shape in one run of ten on an H200 while its bootstrap over rounds said
+-0.3%: the spread between passes was not in the interval.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    import numpy as np

Estimator = Callable[[Sequence[float]], float]
# (baseline samples, candidate samples[, buffer set of each round[, order of each round]]), index = round
Pass = Union[Tuple[Sequence[float], Sequence[float]], Tuple[Sequence[float], Sequence[float], Sequence[int]],
             Tuple[Sequence[float], Sequence[float], Sequence[int], Sequence[int]]]
BASELINE_FIRST, CANDIDATE_FIRST = 0, 1  # a round's order

BOOTSTRAP = 400
LEVEL = 0.95
MIN_CLUSTER_ROUNDS = 3  # a cluster of fewer rounds says nothing about the spread between clusters
MIN_BETWEEN_DF = 2  # t on one degree of freedom is 12.7: no pooled spread from a single pair of clusters
MIN_ORDER_ROUNDS = 2  # rounds of each order a pass needs for its orders to be estimated apart

# Student's t, 97.5% quantile, by degrees of freedom (LEVEL 0.95, two-sided)
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df: int) -> float:
    if df < 1:
        return float("inf")
    return _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df


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


def _log(x: float) -> float:
    return math.log(max(x, 1e-12)) if x != float("inf") else math.log(1e12)


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
    return combine([pass_estimates(p, estimate) for p in passes])


def _column(p: Pass, k: int, n: int) -> List[int]:
    """The pass's k-th per-round column (2: buffer sets, 3: orders), all 0 where it names none for every round."""
    col = p[k] if len(p) > k else None  # type: ignore[misc]
    return [int(x) for x in col[:n]] if col is not None and len(col) >= n else [0] * n


def _split(p: Pass, key: Callable[[int, int], object]) -> List[Pass]:
    """A pass's rounds grouped by key(buffer set, order), each group a pass of its own with both columns, in the
    keys' order."""
    b, c = p[0], p[1]
    n = min(len(b), len(c))
    labels, orders = _column(p, 2, n), _column(p, 3, n)
    out: dict = {}
    for r in range(n):
        gb, gc, gl, go = out.setdefault(key(labels[r], orders[r]), ([], [], [], []))
        gb.append(b[r])
        gc.append(c[r])
        gl.append(labels[r])
        go.append(orders[r])
    return [out[k] for k in sorted(out)]  # type: ignore[type-var]


def strata(p: Pass) -> List[Pass]:
    """A pass's rounds split by the buffer set they ran in and their order: what the bootstrap draws within."""
    return _split(p, lambda label, order: (label, order))


def clusters(p: Pass) -> List[Pass]:
    """A pass's rounds split by the buffer set they ran in (one cluster when the pass names none)."""
    return _split(p, lambda label, order: label)


def order_groups(p: Pass) -> List[Pass]:
    """A pass's rounds by the order they ran in (baseline first, then candidate first): two groups where each
    order has MIN_ORDER_ROUNDS rounds, else the pass whole."""
    groups = _split(p, lambda label, order: order)
    if len(groups) < 2 or min(len(g[0]) for g in groups) < MIN_ORDER_ROUNDS:
        return [p]
    return groups


def _geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(max(x, 1e-12)) for x in xs) / len(xs))


def pass_estimates(p: Pass, estimate: Estimator) -> Tuple[float, float]:
    """(baseline, candidate) of one pass: each kernel's estimate in each order's rounds, geometric mean over the
    orders (the order's factor cancels in the quotient)."""
    groups = order_groups(p)
    if len(groups) == 1:
        return estimate(p[0]), estimate(p[1])
    return _geomean([estimate(g[0]) for g in groups]), _geomean([estimate(g[1]) for g in groups])


def order_gap(p: Pass, estimate: Estimator) -> Optional[float]:
    """Half the difference between the log-ratio of the rounds that ran the baseline first and that of the rounds
    that ran the candidate first (None: the pass has rounds of one order only)."""
    groups = order_groups(p)
    if len(groups) != 2:
        return None
    first, second = (_log(_ratio(estimate(g[0]), estimate(g[1]))) for g in groups)
    return (first - second) / 2


def _percentiles(xs: List[float]) -> Tuple[float, float]:
    s = sorted(xs)
    tail = (1.0 - LEVEL) / 2
    lo = s[max(0, int(math.floor(tail * len(s))))]
    hi = s[min(len(s) - 1, int(math.ceil((1.0 - tail) * len(s))) - 1)]
    return lo, hi


def between_spread(shapes: Sequence[Sequence[Pass]], estimate: Estimator) -> Tuple[float, int, List[int]]:
    """The pooled standard deviation of one cluster's log-ratio around its shape's mean, its degrees of freedom,
    and each shape's number of clusters."""
    ss = 0.0
    df = 0
    counts = []
    for passes in shapes:
        logs = [_log(_ratio(*pass_estimates(cl, estimate))) for p in passes for cl in clusters(p)
                if min(len(cl[0]), len(cl[1])) >= MIN_CLUSTER_ROUNDS]
        counts.append(len(logs))
        if len(logs) >= 2:
            mean = sum(logs) / len(logs)
            ss += sum((x - mean) ** 2 for x in logs)
            df += len(logs) - 1
    return (math.sqrt(ss / df) if df else 0.0), df, counts


def _widen(iv: Tuple[float, float], ratio: float, half_log: float) -> Tuple[float, float]:
    if not half_log or not (ratio > 0 and math.isfinite(ratio)):
        return iv
    return min(iv[0], ratio * math.exp(-half_log)), max(iv[1], ratio * math.exp(half_log))


def shape_gap(passes: Sequence[Pass], estimate: Estimator) -> Optional[float]:
    """A shape's order gap (order_gap): the mean over its passes that have rounds of both orders."""
    gaps = [g for g in (order_gap(p, estimate) for p in passes) if g is not None]
    return sum(gaps) / len(gaps) if gaps else None


Drawn = Tuple[List[List[float]], List[float], List[List[float]]]  # per shape, overall, each shape's order gaps


def rows_estimate(rows: "np.ndarray", estimate: Estimator) -> "np.ndarray":
    """median or lower_quartile of each row, as those take it of a list, by a partial sort."""
    import numpy as np
    n = rows.shape[1]
    if estimate is median:
        mid = sorted({(n - 1) // 2, n // 2})
        return np.partition(rows, mid, axis=1)[:, mid].mean(axis=1)
    if estimate is lower_quartile:
        k = (n - 1) // 4
        return np.partition(rows, k, axis=1)[:, k]
    raise ValueError(f"the bootstrap takes the median or the lower quartile, not {estimate!r}")


def rows_ratio(b: "np.ndarray", c: "np.ndarray") -> "np.ndarray":
    """_ratio of each element: inf where the candidate's estimate is not positive."""
    import numpy as np
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c > 0, b / np.where(c > 0, c, 1.0), np.inf)


def balanced(groups: Sequence[Tuple["np.ndarray", "np.ndarray"]]) -> Tuple["np.ndarray", "np.ndarray"]:
    """Each kernel's estimates over its order groups' (pass_estimates, a row at a time): their geometric mean."""
    import numpy as np
    return (np.exp(np.mean([np.log(np.maximum(b, 1e-12)) for b, _ in groups], axis=0)),
            np.exp(np.mean([np.log(np.maximum(c, 1e-12)) for _, c in groups], axis=0)))


def drawn_estimates(drawn_strata: Sequence[Pass], by_order: bool, estimate: Estimator, rng: "np.random.Generator",
                    resamples: int) -> List[Tuple["np.ndarray", "np.ndarray"]]:
    """The bootstrap of one pass: whole rounds drawn with replacement within each stratum (stratum sizes kept; the
    draws in the strata's order), `resamples` at once; each order group's (baseline, candidate) estimates, one per
    resample, in the orders' order (one group where by_order is False)."""
    import numpy as np
    groups: dict = {}
    for st in drawn_strata:
        idx = rng.integers(0, len(st[0]), size=(resamples, len(st[0])))
        rb, rc = groups.setdefault(st[3][0] if by_order else 0, ([], []))  # type: ignore[misc]
        rb.append(np.asarray(st[0], dtype=np.float64)[idx])
        rc.append(np.asarray(st[1], dtype=np.float64)[idx])
    return [(rows_estimate(np.concatenate(rb, axis=1), estimate), rows_estimate(np.concatenate(rc, axis=1), estimate))
            for _, (rb, rc) in sorted(groups.items())]


def _bootstrap(shapes: Sequence[Sequence[Pass]], estimate: Estimator, rounds: int, seed: str) -> Drawn:
    """Each shape's resampled ratios and order gaps, and the geometric mean's ratios: whole rounds drawn within each
    stratum, orders balanced as pass_estimates does, passes combined as `combine` does, every resample at once in
    numpy (in Python, one resample at a time, the judge spent 0.1-0.2 s of CPU per call on three shapes of 100-200
    rounds, three or four calls an evaluation)."""
    import hashlib
    import numpy as np

    def logs(x: "np.ndarray") -> "np.ndarray":
        return np.where(np.isinf(x), math.log(1e12), np.log(np.maximum(x, 1e-12)))

    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    per_shape: List["np.ndarray"] = []
    gaps: List[List[float]] = []
    for passes in shapes:
        if min(len(p[0]) for p in passes) < 2:
            per_shape.append(np.full(rounds, _ratio(*shape_estimate(passes, estimate))))
            g = shape_gap(passes, estimate)
            gaps.append([] if g is None else [g] * rounds)
            continue
        est = []  # each pass's (baseline, candidate) estimates, one per resample
        pass_gaps = []  # each pass's order gap, one per resample, where it has both orders
        for p in passes:
            group = drawn_estimates(strata(p), len(order_groups(p)) == 2, estimate, rng, rounds)
            if len(group) == 2:
                pass_gaps.append((logs(rows_ratio(*group[0])) - logs(rows_ratio(*group[1]))) / 2)
            est.append(balanced(group))
        if len(est) >= 3:  # the pass of median ratio
            per_shape.append(np.sort(np.stack([rows_ratio(b, c) for b, c in est]), axis=0)[len(est) // 2])
        else:  # geometric means of each kernel's estimates
            per_shape.append(rows_ratio(*balanced(est)))
        gaps.append(np.mean(pass_gaps, axis=0).tolist() if pass_gaps else [])
    overall = np.exp(np.sum([logs(r) for r in per_shape], axis=0) / max(1, len(shapes)))
    return [r.tolist() for r in per_shape], overall.tolist(), gaps


def order_half(passes: Sequence[Pass], estimate: Estimator, resampled: Sequence[float]) -> float:
    """A shape's order part of its interval (log terms): its order gap, less the variance the rounds' own scatter
    gives it (over the bootstrap's resamples), as a half-width; 0 where the pass has one order."""
    g = shape_gap(passes, estimate)
    if g is None or len(resampled) < 2:
        return 0.0
    mean = sum(resampled) / len(resampled)
    var = sum((x - mean) ** 2 for x in resampled) / (len(resampled) - 1)
    return math.sqrt(max(0.0, g * g - var))


def intervals(shapes: Sequence[Sequence[Pass]], estimate: Estimator, rounds: int = BOOTSTRAP,
              kinds: Optional[Sequence[str]] = None) -> Tuple[List[Tuple[float, float]], Tuple[float, float]]:
    """Each shape's interval and the geometric mean's: the bootstrap over rounds (the same resamples for both;
    seeded by nothing but the samples, so a verdict's interval follows from its samples), widened to the spread
    between clusters where the evaluation has enough of them, and to the two orders' readings where they differ.

    kinds: how each shape was timed (the timer's name); the spread between clusters is pooled over the shapes timed
    the same way. A CUDA graph's sample turns through all of its buffer sets in every replay, so its pass is one
    cluster already averaged over placements, and the scatter between an eager pass's buffer sets (one set a
    round) says nothing of it: pooled with the softmax example's 60 us eager shape (4 sets whose ratios scattered
    by tens of percent while each set always ran the two kernels in one order, and that shape's second kernel runs
    17-23% slower, docs/benchmarks.md, "What the timing corrects"), its 7 us graph shapes, known to +-2% by their
    rounds, read 0.50-2.0 (an H200 self-judgement, 2026-12-03)."""
    seed = repr([[len(p[0]) for p in s] for s in shapes])
    per_shape, overall, gaps = _bootstrap(shapes, estimate, rounds, seed)
    shape_iv = [_percentiles(xs) for xs in per_shape]
    overall_iv = _percentiles(overall)
    groups = list(kinds) if kinds is not None and len(kinds) == len(shapes) else [""] * len(shapes)
    between = [0.0] * len(shapes)  # each shape's between part, a half-width in log terms
    for kind in sorted(set(groups)):
        idx = [i for i, g in enumerate(groups) if g == kind]
        s, df, counts = between_spread([shapes[i] for i in idx], estimate)
        if df < MIN_BETWEEN_DF or s == 0.0:
            continue
        for i, k in zip(idx, counts):
            between[i] = t975(df) * s / math.sqrt(max(1, k))
    halves = [math.hypot(b, order_half(passes, estimate, g)) for b, passes, g in zip(between, shapes, gaps)]
    if not any(halves):
        return shape_iv, overall_iv
    ratios = [_ratio(*shape_estimate(passes, estimate)) for passes in shapes]
    shape_iv = [_widen(iv, r, h) for iv, r, h in zip(shape_iv, ratios, halves)]
    geo = math.exp(sum(_log(r) for r in ratios) / max(1, len(ratios)))
    return shape_iv, _widen(overall_iv, geo, math.sqrt(sum(h * h for h in halves)) / max(1, len(halves)))


# The least half-width (log terms) of a CPU verdict's interval: a shape's passes on a shared CPU are timed seconds
# apart, and what drifts between them (the other processes' load, the frequency) is not in the spread of one
# pass's rounds. 80 self-judgements of four numpy problems beside two busy processes read 0.97-1.04, and 2 of their
# bootstrap intervals did not cover 1.00 (docs/benchmarks.md, "CPU self-judgement").
CPU_FLOOR = math.log(1.03)


def with_floor(iv: Tuple[float, float], ratio: float, half_log: float = CPU_FLOOR) -> Tuple[float, float]:
    """iv, reaching at least ratio x exp(+-half_log)."""
    return _widen(iv, ratio, half_log)


def wide(interval: Tuple[float, float], ratio: float, goal: float) -> bool:
    """Wider than the goal: an end further than goal (relative) from the ratio."""
    lo, hi = interval
    return ratio > 0 and (hi > ratio * (1 + goal) or lo < ratio * (1 - goal))


def worth_retiming(interval: Tuple[float, float], ratio: float, goal: float, reach: float = 2.0) -> bool:
    """Wider than the goal, and near enough to it: at most reach x the goal. A second pass doubles a shape's rounds
    and its buffer sets, which narrows its interval by about sqrt(2), a third (where two passes disagree) by about
    sqrt(3). An interval far wider than its goal comes from the spread between buffer sets (ratios.py): passes of
    new buffers do not bring it within the goal, and the verdict says how wide it is. A shape whose ratio differs
    from the other shapes' with an interval that says so is not timed again: a candidate's shapes often differ.
    On an H200 (2026-12-03), timing again every shape wider than its goal, and every shape that differed, cost a
    third of the judged candidates a minute and moved a re-timed shape's ratio by 0.2-0.7% (median); within twice
    the goal, the same self-judgements' geometric means and worst shapes were what re-timing them all gave
    (docs/benchmarks.md)."""
    return wide(interval, ratio, goal) and not wide(interval, ratio, goal * reach)


def apart(a: Tuple[float, float], b: Tuple[float, float]) -> bool:
    """Two intervals that do not overlap: two passes of a shape that disagree."""
    return a[1] < b[0] or b[1] < a[0]

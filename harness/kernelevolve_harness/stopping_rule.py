"""When one timed pass of a shape has rounds enough: as soon as its paired ratio is known as precisely as the
fidelity goal needs, never before a floor, always at a ceiling.

The interval is the one the verdict's is built from (ratios.py, "within"): a percentile bootstrap of
estimate(baseline) / estimate(candidate) over whole rounds, drawn within each buffer set and run order, each
kernel's estimate balanced over the two orders. More rounds narrow it; they do not narrow the spread between buffer
sets (where a buffer lies in device memory), which the judge adds across shapes and answers by timing a shape again
in new buffers, nor what the run order does to a kernel's time, which the judge adds too. So the rule looks at the
part rounds can change, and the goal is narrower than the verdict's (ratio_goal) to leave room for the others.

A pass whose ratio lies wholly below the settings' far_below (the candidate at most half as fast as the baseline
there) stops once its interval is within far_goal instead, or at once however wide where it lies wholly below half
of far_below, and may stop so from far_floor_rounds on: no choice turns on a finer figure of a launch that loses by
that much, and its calls are the slowest to time (on the H200, the softmax example's row blocks of 128 and 256
rows, 25-50x slower than its launch as written, took up to 2.7 s of rounds each under the timing lock; with the
floor of 30 rounds kept, such candidates still held 65% of the lock in a two-minute tune, at 0.02-0.04x). Such a
pass still takes its spot checks (shape_timing.py).

The bootstrap and the estimator are the verdict's (ratios.drawn_estimates, ratios.balanced); numpy computes them
(200 resamples of up to a few hundred rounds in about a millisecond): in Python, one
check cost as long as dozens of rounds, and the worker held the timing lock while it ran.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from .ratios import balanced, drawn_estimates, lower_quartile, median, order_groups, rows_estimate, rows_ratio, strata
from .timing_settings import TimingSettings

RESAMPLES = 200
LEVEL = 0.95


@dataclass
class RuleStats:
    rounds: int  # rounds kept
    set_aside: int  # rounds taken and set aside (a launch still being queued when its timing began)
    timed_s: float  # seconds of timed work kept (both kernels, every call)
    half_width: Optional[float]  # the last computed relative half-width of the ratio's interval
    reason: str  # why the pass stopped ("" while it goes on)


class StoppingRule:
    """Feed it each kept round (add_measurement) and each round set aside (add_set_aside); ask is_finished()
    after each group of rounds. estimator: "median" (GPU) or "lower quartile" (CPU), as the verdict uses."""

    def __init__(self, settings: TimingSettings, estimator: str = "median", goal: Optional[float] = None) -> None:
        self.s = settings
        self.goal = settings.round_goal if goal is None else goal
        self.estimator = estimator
        self.baseline: List[float] = []
        self.candidate: List[float] = []
        self.labels: List[int] = []
        self.orders: List[int] = []
        self.set_aside = 0
        self.timed_s = 0.0
        self.half_width: Optional[float] = None
        self.ratio: Optional[float] = None  # the ratio the last half-width is relative to
        self.order_ratios: List[float] = []  # each run order's own ratio, where both orders have rounds enough
        self.reason = ""
        self._checked_at = 0

    def add_measurement(self, baseline_ms: float, candidate_ms: float, buffer_set: int = 0,
                        timed_s: Optional[float] = None, order: int = 0) -> None:
        """One round: each kernel's time per call, the buffer set both ran in, the round's seconds of timed work
        (default: one call of each), and which kernel ran first (ratios.BASELINE_FIRST or CANDIDATE_FIRST)."""
        self.baseline.append(baseline_ms)
        self.candidate.append(candidate_ms)
        self.labels.append(buffer_set)
        self.orders.append(order)
        self.timed_s += (baseline_ms + candidate_ms) / 1000.0 if timed_s is None else timed_s

    def add_set_aside(self) -> None:
        self.set_aside += 1

    def is_finished(self) -> bool:
        self.reason = self._reason()
        return bool(self.reason)

    def stats(self) -> RuleStats:
        return RuleStats(len(self.candidate), self.set_aside, self.timed_s, self.half_width, self.reason)

    def _reason(self) -> str:
        s, kept = self.s, len(self.candidate)
        if kept + self.set_aside >= 2 * s.ceiling_rounds:
            return "ceiling: rounds taken"  # bounded even when most rounds are set aside
        if kept < min(s.floor_rounds, s.far_floor_rounds) or self.timed_s < s.floor_s:
            return ""
        if kept < s.floor_rounds:  # between the two floors only a pass far below may stop
            if s.far_below <= 0:
                return ""
            half_width = self._checked()
            return "far below" if far_below(self.ratio, half_width, s, self.order_ratios) else ""
        if kept >= s.ceiling_rounds:
            return "ceiling: rounds"
        if self.timed_s >= s.ceiling_s:
            return "ceiling: timed work"
        if self.goal <= 0:
            return "floor"
        if self._checked() <= self.goal:
            return "precise"
        return "far below" if far_below(self.ratio, self.half_width, self.s, self.order_ratios) else ""

    def _checked(self) -> float:
        """The interval's half-width, the bootstrap run again once a tenth more rounds are in (each check costs
        about a millisecond)."""
        kept = len(self.candidate)
        if self.half_width is None or kept - self._checked_at >= max(1, self._checked_at // 10):
            self._checked_at = kept
            self.half_width = self.interval_half_width()
        return self.half_width

    def interval_half_width(self) -> float:
        """The larger distance from the ratio to an end of its bootstrap interval, relative to the ratio (each
        kernel's estimate balanced over the rounds' orders, as ratios.pass_estimates takes it)."""
        estimate = median if self.estimator == "median" else lower_quartile
        p = (self.baseline, self.candidate, self.labels, self.orders)
        by_order = len(order_groups(p)) == 2
        if not by_order:  # one group: too few rounds of an order to estimate it apart
            p = (self.baseline, self.candidate, self.labels, [0] * len(self.orders))
        # each order's rounds, whole; and the strata the bootstrap draws within, order by order
        orders = sorted(set(p[3]))
        whole = [([b for b, o in zip(p[0], p[3]) if o == order], [c for c, o in zip(p[1], p[3]) if o == order])
                 for order in orders]
        groups = [(rows_estimate(np.asarray([b], dtype=np.float64), estimate),
                   rows_estimate(np.asarray([c], dtype=np.float64), estimate)) for b, c in whole]
        ratio = rows_ratio(*balanced(groups))[0]
        self.ratio = float(ratio)
        self.order_ratios = [float(rows_ratio(*balanced([g]))[0]) for g in groups] if len(groups) > 1 else []
        if not (ratio > 0 and np.isfinite(ratio)):
            return float("inf")
        rng = np.random.default_rng(len(self.baseline))  # seeded by the count alone: the same samples, the same answer
        drawn = sorted(strata(p), key=lambda st: (st[3][0], st[2][0]))  # drawn order by order, then by buffer set
        ratios = rows_ratio(*balanced(drawn_estimates(drawn, by_order, estimate, rng, RESAMPLES)))
        tail = (1.0 - LEVEL) / 2
        lo, hi = np.quantile(ratios, [tail, 1.0 - tail])
        return float(max(hi / ratio - 1.0, 1.0 - lo / ratio))


def far_below(ratio: Optional[float], half_width: float, s: TimingSettings, orders: Sequence[float] = ()) -> bool:
    """A ratio whose interval (relative half-width) lies wholly below s.far_below and is within s.far_goal, or lies
    wholly below half of s.far_below however wide: as precise as a launch that loses by that much needs to be (off
    when far_below is 0). The second: on an H100, the softmax example's row blocks of 128-256 rows on 2048x4097
    (65 us as written) read 0.04-0.10x with intervals as wide as 0.019-0.066 and 0.074-0.144 after 200 rounds,
    and ran to the ceiling under the timing lock.

    orders: each run order's own ratio, which must lie below as well. The interval is balanced over the two orders
    and drawn within each, so two orders that disagree give a narrow interval between them. On an H100 a Liger
    softmax judged against itself read 0.28 on 512x32000 and its pass stopped far below after 10 rounds
    (2026-12-05); its verdict's interval, widened to both orders' readings, was 0.08-1.00, and 0.28 is the geometric
    mean of 1.0 and 0.08: orders that read about that, by these figures (the rounds were not kept). Such a pass goes
    on to the floor, and the verdict's interval and the judge's re-timing take it."""
    if not (s.far_below > 0 and ratio is not None and 0 < ratio and np.isfinite(half_width)):
        return False
    top = max([ratio * (1.0 + half_width), *orders])
    return top < s.far_below and (half_width <= s.far_goal or top < s.far_below / 2)


def describe(stats: RuleStats) -> Dict[str, object]:
    """The rule's account of a pass, for the timing message (diagnostics)."""
    return {"stop": stats.reason, "half_width": None if stats.half_width is None else round(stats.half_width, 5),
            "timed_s": round(stats.timed_s, 4)}

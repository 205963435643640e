"""Paired ratios and their intervals (ratios.py): how sure a shape's speedup is, and when it is timed again."""
import math
import os
import random

import pytest

from kernelevolve_harness.ratios import (BASELINE_FIRST, CANDIDATE_FIRST, apart, between_spread, clusters, combine,
                                        intervals, lower_quartile, median, order_gap, pass_estimates, shape_estimate,
                                        wide, worth_retiming)
from kernelevolve_harness.shape_timing import round_order


def rounds(base: float, ratio: float, n: int, noise: float, seed: int = 1):
    rng = random.Random(seed)
    b, c = [], []
    for _ in range(n):
        drift = 1 + rng.uniform(-0.3, 0.3)  # the machine's state, shared by the two samples of a round
        b.append(base * drift * (1 + rng.uniform(-noise, noise)))
        c.append(base / ratio * drift * (1 + rng.uniform(-noise, noise)))
    return b, c


def test_the_interval_covers_the_ratio_and_narrows_with_rounds() -> None:
    few = [[rounds(1.0, 1.25, 10, 0.05)]]
    many = [[rounds(1.0, 1.25, 200, 0.05)]]
    (iv_few,), _ = intervals(few, median)
    (iv_many,), overall = intervals(many, median)
    assert iv_few[0] < 1.25 < iv_few[1] and iv_many[0] < 1.25 < iv_many[1]
    assert iv_many[1] - iv_many[0] < iv_few[1] - iv_few[0]
    assert overall == iv_many  # one shape: its interval is the geometric mean's


def test_the_interval_follows_from_the_samples_alone() -> None:
    shapes = [[rounds(2.0, 0.9, 40, 0.02, seed=3)], [rounds(1.0, 1.1, 40, 0.02, seed=4)]]
    assert intervals(shapes, lower_quartile) == intervals(shapes, lower_quartile)


def test_passes_combine_as_ratios() -> None:
    # two passes: the geometric mean of their ratios, as (baseline, candidate) whose quotient it is
    b, c = combine([(2.0, 1.0), (1.0, 0.25)])
    assert abs(b / c - (2.0 * 4.0) ** 0.5) < 1e-12
    # three: the pass of median ratio (an outlying pass is outvoted)
    assert combine([(1.0, 1.0), (1.0, 1.25), (1.0, 0.98)]) == (1.0, 1.0)
    est = shape_estimate([([1.0, 1.0, 1.0], [0.5, 0.5, 0.5])], median)
    assert est == combine([(1.0, 0.5)])


def test_a_shape_is_timed_again_only_where_another_pass_can_bring_it_within_its_goal() -> None:
    assert wide((0.9, 1.1), 1.0, 0.02)
    assert not wide((0.99, 1.01), 1.0, 0.02)
    assert worth_retiming((0.975, 1.025), 1.0, 0.02)  # 1.25 x the goal: a second pass narrows it by ~sqrt(2)
    assert worth_retiming((0.962, 1.038), 1.0, 0.02)  # 1.9 x the goal
    assert not worth_retiming((0.99, 1.01), 1.0, 0.02)  # within the goal already
    assert not worth_retiming((0.9, 1.1), 1.0, 0.02)  # 5 x the goal: still wider after any pass the judge adds
    assert not worth_retiming((0.88, 0.90), 0.89, 0.02)  # a ratio unlike the other shapes', and sure of it
    assert worth_retiming((0.9, 1.1), 1.0, 0.02, reach=10.0)
    # a kernel under ~10 us timed as CUDA graphs aims at +-5%: +-6% is within reach, +-2.5% needs nothing
    assert worth_retiming((0.94, 1.06), 1.0, 0.05) and not worth_retiming((0.975, 1.025), 1.0, 0.05)
    assert apart((0.88, 0.90), (0.99, 1.01)) and not apart((0.9, 1.0), (0.99, 1.01))


def test_a_verdict_carries_each_shapes_interval_and_the_geometric_means(harness) -> None:
    from conftest import NAIVE
    v = harness.mm(NAIVE)
    assert v["status"] == "ok", v
    lo, hi = v["speedup_interval"]
    assert lo <= v["speedup"] <= hi
    assert f"({lo:.2f}-{hi:.2f}" in v["reason"]
    for s in v["shapes"]:
        assert s["interval"][0] <= s["speedup"] <= s["interval"][1], s
    assert v["timing"]["paired"] == "interleaved rounds"


def test_an_unsure_shape_is_timed_again_and_its_passes_checked(harness, monkeypatch) -> None:
    # a goal no CPU timing meets: the two least sure shapes get a second pass (a third where the two disagree),
    # whose timed calls are checked like the first pass's (every pass's evidence goes to the judge)
    from conftest import NAIVE
    monkeypatch.setenv("KERNELEVOLVE_RATIO_GOAL", "0.000001")
    monkeypatch.setenv("KERNELEVOLVE_RETIME_REACH", "1e9")  # however far from it
    v = harness.mm(NAIVE)
    assert v["status"] == "ok", v
    assert v["stages"]["retimed_shapes"] >= 2
    assert sorted(s.get("passes", 1) >= 2 for s in v["shapes"]) == [False, True, True]


def test_a_verdict_can_carry_every_pass_for_a_study_of_the_rules(harness, monkeypatch, tmp_path) -> None:
    # KERNELEVOLVE_VERDICT_PASSES=1: each shape's passes with their samples, read by scripts/gpu/retime_study.py
    import json
    import subprocess
    import sys
    from conftest import NAIVE
    monkeypatch.setenv("KERNELEVOLVE_RATIO_GOAL", "0.000001")
    monkeypatch.setenv("KERNELEVOLVE_RETIME_REACH", "1e9")
    monkeypatch.setenv("KERNELEVOLVE_VERDICT_PASSES", "1")
    v = harness.mm(NAIVE)
    assert v["status"] == "ok", v
    passes = v["timing"]["passes"]
    assert [len(p) for p in passes] == [s.get("passes", 1) for s in v["shapes"]]
    for p in passes:
        for h in p:
            assert len(h["samples"]["baseline"]) == len(h["samples"]["candidate"]) >= 3
    # the study reads the verdict back: the shapes of the first passes wider than the goal, the passes that followed
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "run01.json").write_text(json.dumps(v) + "\n")
    study = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu", "retime_study.py")
    r = subprocess.run([sys.executable, study, "--self", str(tmp_path / "kernel" / "run01.json")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"1 verdicts, {len(passes)} shapes; passes timed again {sum(len(p) - 1 for p in passes)}" in r.stdout
    assert "kernel " in r.stdout  # its row in the self-judgement table


def self_judgement(rng: random.Random, shapes: int, sets: int, per_set: int, between: float, within: float):
    """One synthetic evaluation of a kernel against itself on a GPU: each buffer set moves the candidate's time
    against the baseline's by a log-normal factor (between), each sample by a smaller one (within)."""
    out = []
    for _ in range(shapes):
        b, c, labels = [], [], []
        effects = [rng.gauss(0.0, between) for _ in range(sets)]
        for r in range(sets * per_set):
            k = r % sets
            drift = 1 + rng.uniform(-0.05, 0.05)
            b.append(40.0 * drift * (1 + rng.gauss(0.0, within)))
            c.append(40.0 * drift * math.exp(effects[k]) * (1 + rng.gauss(0.0, within)))
            labels.append(k)
        out.append([(b, c, labels)])
    return out


def covered(iv) -> bool:
    return iv[0] <= 1.0 <= iv[1]


def test_the_interval_includes_the_spread_between_buffer_sets() -> None:
    # Buffer sets that move the ratio by ~1.5% each, rounds that say +-0.3%. One set per pass (as the worker
    # timed before): the bootstrap over rounds misses 1.00 on most shapes. Four sets per pass, named: the spread
    # between them, pooled over shapes, widens the interval, which covers 1.00 (95% aimed at).
    rng = random.Random(7)
    shapes_covered = overall_covered = rounds_only = total = 0
    for _ in range(40):
        ev = self_judgement(rng, shapes=4, sets=4, per_set=10, between=0.015, within=0.004)
        shape_iv, overall = intervals(ev, median, rounds=100)
        one_set = self_judgement(rng, shapes=4, sets=1, per_set=40, between=0.015, within=0.004)
        bare_iv, _ = intervals(one_set, median, rounds=100)
        shapes_covered += sum(covered(iv) for iv in shape_iv)
        rounds_only += sum(covered(iv) for iv in bare_iv)
        overall_covered += covered(overall)
        total += len(ev)
    assert shapes_covered / total >= 0.88, (shapes_covered, total)
    assert overall_covered >= 36, overall_covered
    assert rounds_only / total <= 0.5, (rounds_only, total)


def test_steady_buffer_sets_keep_the_interval_narrow() -> None:
    # no spread between sets: the interval stays within the +-2% goal (no needless re-timing) and still covers
    rng = random.Random(11)
    ev = self_judgement(rng, shapes=4, sets=4, per_set=12, between=0.0, within=0.003)
    shape_iv, overall = intervals(ev, median, rounds=200)
    for iv in shape_iv:
        assert not wide(iv, 1.0, 0.02), iv
    assert covered(overall)


def test_the_spread_between_buffer_sets_is_pooled_over_shapes_timed_alike() -> None:
    # An eager shape whose four buffer sets scatter its ratio by ~20% (where a buffer lies), beside two graph shapes
    # of one cluster each, known to +-1% by their rounds: the eager shape's spread widens its own interval, and the
    # graph shapes' only when pooled with it (the judge names each shape's timer).
    rng = random.Random(3)
    eager = self_judgement(rng, shapes=1, sets=4, per_set=40, between=0.2, within=0.004)
    graphs = [[(b, c)] for b, c in (rounds(0.05, 1.0, 40, 0.01, seed=s) for s in (8, 9))]
    shapes = eager + graphs
    kinds = ["cuda-events", "cuda-graph", "cuda-graph"]
    alike, overall_alike = intervals(shapes, median, rounds=200, kinds=kinds)
    pooled, overall_pooled = intervals(shapes, median, rounds=200)
    for iv in alike[1:]:
        assert not wide(iv, 1.0, 0.03) and covered(iv), iv
    for iv in pooled[1:]:
        assert iv[1] / iv[0] > 1.3, iv  # as before: the eager sets' spread on every shape
    assert alike[0] == pooled[0]  # the eager shape's own interval, either way
    assert overall_alike[1] / overall_alike[0] < overall_pooled[1] / overall_pooled[0]
    # shapes timed alike still pool (the same as no kinds named)
    same, _ = intervals(shapes, median, rounds=200, kinds=["cuda-events"] * 3)
    assert same == pooled


def test_passes_timed_again_feed_the_interval() -> None:
    # CPU: one cluster per pass. Two shapes re-timed twice, whose passes disagree (the machine's state changed):
    # their spread widens every shape's interval; with the passes alone (no re-timing) nothing is pooled.
    a = rounds(1.0, 1.0, 30, 0.01, seed=1)
    shifted = ([x * 1.06 for x in a[0]], a[1])
    shapes = [[a, shifted, a], [shifted, a, shifted], [rounds(1.0, 1.0, 30, 0.01, seed=5)]]
    pooled, _ = intervals(shapes, lower_quartile, rounds=100)
    alone, _ = intervals([[p[0]] for p in shapes], lower_quartile, rounds=100)
    for iv_pooled, iv_alone in zip(pooled, alone):
        assert iv_pooled[1] - iv_pooled[0] > iv_alone[1] - iv_alone[0]
    assert pooled[2][1] > 1.03  # the shape timed once is as unsure as a pass of the others


def test_clusters_follow_the_buffer_set_of_each_round() -> None:
    p = ([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1])
    assert [cl[:2] for cl in clusters(p)] == [([1.0, 3.0], [1.0, 3.0]), ([2.0, 4.0], [2.0, 4.0])]
    assert [cl[:2] for cl in clusters(([1.0, 2.0], [3.0, 4.0]))] == [([1.0, 2.0], [3.0, 4.0])]
    s, df, counts = between_spread([[p]], median)
    assert df == 0 and counts == [0]  # clusters of two rounds say nothing


def ordered_pass(rng: random.Random, n: int, sets: int, second: float, ratio: float = 1.0, within: float = 0.01,
                 baseline_first_share: float = 0.5):
    """A pass whose kernel that runs second in a round takes `second` times as long (the order effect), the
    candidate 1/ratio times the baseline; a share of the rounds run the baseline first."""
    b, c, labels, orders = [], [], [], []
    for r in range(n):
        first = BASELINE_FIRST if rng.random() < baseline_first_share else CANDIDATE_FIRST
        tb = 50.0 * (second if first == CANDIDATE_FIRST else 1.0) * (1 + rng.gauss(0.0, within))
        tc = 50.0 / ratio * (second if first == BASELINE_FIRST else 1.0) * (1 + rng.gauss(0.0, within))
        b.append(tb)
        c.append(tc)
        labels.append(r % sets)
        orders.append(first)
    return b, c, labels, orders


def test_the_run_order_cancels_in_the_estimate() -> None:
    # the second kernel of a round 20% slower (a softmax shape on an H200): mixed, a median of each kernel over both
    # orders lands anywhere between 1/1.2 and 1.2 as one order has a few rounds more; balanced, at the ratio
    rng = random.Random(5)
    for share in (0.45, 0.5, 0.55):
        for ratio in (1.0, 1.3):
            p = ordered_pass(rng, 200, 4, 1.2, ratio=ratio, baseline_first_share=share)
            b, c = pass_estimates(p, median)
            assert b / c == pytest.approx(ratio, rel=0.01)
    lopsided = ordered_pass(random.Random(6), 200, 4, 1.2, baseline_first_share=0.56)
    assert median(lopsided[0]) / median(lopsided[1]) < 0.9  # the mixed median: off by the order's factor
    # without the orders, the estimate is the mixed one, as before
    assert pass_estimates(lopsided[:3], median) == (median(lopsided[0]), median(lopsided[1]))


def test_the_interval_reaches_both_orders_readings_where_they_differ() -> None:
    rng = random.Random(8)
    p = ordered_pass(rng, 200, 4, 1.04)  # 4% for the second kernel, rounds to within 1%
    (iv,), _ = intervals([[p]], median)
    gap = order_gap(p, median)
    assert gap == pytest.approx(-math.log(1.04), rel=0.2)  # the baseline-first rounds read 1/1.04, the others 1.04
    assert iv[0] <= 1 / 1.035 and iv[1] >= 1.035
    # no order effect: the gap the noise makes is taken out again, and the interval is as narrow as with the orders
    # unnamed
    steady = ordered_pass(random.Random(8), 200, 4, 1.0)
    assert abs(order_gap(steady, median)) < 0.005
    (iv_steady,), _ = intervals([[steady]], median)
    (iv_plain,), _ = intervals([[steady[:3]]], median)
    assert iv_steady[1] / iv_steady[0] == pytest.approx(iv_plain[1] / iv_plain[0], rel=0.005)
    assert iv_steady[1] / iv_steady[0] < 1.02 < iv[1] / iv[0] - 0.05


def test_each_buffer_set_sees_both_orders() -> None:
    for sets in (1, 2, 3, 4, 5):
        seen = {}
        for t in range(8 * sets):
            seen.setdefault(t % sets, []).append(round_order(t, sets))
        for orders in seen.values():
            assert orders.count(BASELINE_FIRST) == orders.count(CANDIDATE_FIRST)
    # rounds side by side still alternate most of the time (each kernel follows the other)
    assert [round_order(t, 4) for t in range(8)] == [0, 1, 0, 1, 1, 0, 1, 0]
    # the clusters of buffer sets carry their rounds' orders, and their ratios balance them
    p = ordered_pass(random.Random(9), 80, 4, 1.2)
    for cl in clusters(p):
        assert len(cl) == 4 and set(cl[2]) == {cl[2][0]}


def test_a_cpu_verdicts_interval_reaches_the_floor_of_what_drifts_between_passes() -> None:
    from kernelevolve_harness.ratios import CPU_FLOOR, with_floor
    lo, hi = with_floor((0.99, 1.01), 1.0)
    assert lo == pytest.approx(math.exp(-CPU_FLOOR)) and hi == pytest.approx(math.exp(CPU_FLOOR))
    assert with_floor((0.5, 2.0), 1.0) == (0.5, 2.0)  # a wider interval is kept as it is


def test_the_bootstraps_estimator_is_the_lists_on_every_row() -> None:
    # one estimator: the numpy bootstrap (the verdict's and the stopping rule's) takes each resample's median or
    # lower quartile exactly as ratios.median and ratios.lower_quartile take a list's
    import numpy as np
    from kernelevolve_harness.ratios import rows_estimate
    rng = random.Random(4)
    for n in (1, 2, 3, 4, 5, 8, 31):
        rows = [[rng.lognormvariate(0, 0.3) for _ in range(n)] for _ in range(20)]
        for estimate in (median, lower_quartile):
            assert rows_estimate(np.asarray(rows), estimate).tolist() == [estimate(r) for r in rows]
    with pytest.raises(ValueError, match="median or the lower quartile"):
        rows_estimate(np.asarray(rows), min)

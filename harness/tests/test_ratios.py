"""Paired ratios and their intervals (ratios.py): how sure a shape's speedup is, and when it is timed again."""
import random

from kernelevolve_harness.ratios import apart, combine, disagreeing, intervals, lower_quartile, median, shape_estimate, wide


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


def test_wide_and_disagreeing_shapes_are_named() -> None:
    assert wide((0.9, 1.1), 1.0, 0.02)
    assert not wide((0.99, 1.01), 1.0, 0.02)
    ivs = [(0.99, 1.01), (0.995, 1.005), (0.88, 0.90), (0.98, 1.02)]
    assert disagreeing([1.0, 1.0, 0.89, 1.0], ivs, 0.02) == [2]
    assert disagreeing([1.0, 0.89], ivs[:2], 0.02) == []  # two shapes: no majority to disagree with
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
    v = harness.mm(NAIVE)
    assert v["status"] == "ok", v
    assert v["stages"]["retimed_shapes"] >= 2
    assert sorted(s.get("passes", 1) >= 2 for s in v["shapes"]) == [False, True, True]

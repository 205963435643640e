"""The stopping rule of a timed pass (stopping_rule.py), without a GPU: it stops as soon as the paired ratio's
interval is as narrow as the goal, never below its floor, and at its ceiling however noisy the samples."""
import random

import pytest

from kernelevolve_harness.ratios import intervals, median
from kernelevolve_harness.stopping_rule import StoppingRule
from kernelevolve_harness.timing_settings import TimingSettings

GPU = TimingSettings(floor_rounds=30, floor_s=0.0, ceiling_rounds=200, ceiling_s=1e9, round_goal=0.01)


def run(rule: StoppingRule, noise: float, seed: int = 1, kernel_ms: float = 0.05, sets: int = 4,
        slower: float = 1.0) -> int:
    """Feeds rounds of two kernels, the candidate `slower` times the baseline's time (noise per sample), until the
    rule says enough; the rounds it took."""
    rng = random.Random(seed)
    for r in range(10_000):
        rule.add_measurement(kernel_ms * (1 + rng.gauss(0, noise)), slower * kernel_ms * (1 + rng.gauss(0, noise)),
                             r % sets)
        if rule.is_finished():
            return r + 1
    raise AssertionError("the rule never stopped")


def test_tight_samples_stop_at_the_floor() -> None:
    rule = StoppingRule(GPU)
    assert run(rule, noise=0.002) == 30
    stats = rule.stats()
    assert stats.reason == "precise" and stats.half_width is not None and stats.half_width <= 0.01


def test_moderate_noise_takes_more_rounds_and_stops_once_precise() -> None:
    rule = StoppingRule(GPU)
    rounds = run(rule, noise=0.04)
    assert 30 < rounds < 200, rounds
    assert rule.stats().reason == "precise"
    assert rule.stats().half_width <= 0.01


def test_noisy_samples_run_to_the_ceiling() -> None:
    rule = StoppingRule(GPU)
    assert run(rule, noise=0.5) == 200
    assert rule.stats().reason == "ceiling: rounds"


def test_never_below_the_floor_of_rounds_or_of_timed_work() -> None:
    rule = StoppingRule(GPU)
    for r in range(29):
        rule.add_measurement(1.0, 1.0, r % 4)
        assert not rule.is_finished(), r  # identical samples, yet under the floor
    cpu = StoppingRule(TimingSettings(floor_rounds=5, floor_s=0.08, ceiling_rounds=200, ceiling_s=0.32,
                                      round_goal=0.02), "lower quartile")
    # 1 ms per call and per kernel: 2 ms of timed work a round, so the 80 ms floor takes 40 rounds
    assert run(cpu, noise=0.001, kernel_ms=1.0, sets=1) == 40


def test_the_ceiling_of_timed_work_ends_a_noisy_pass_after_the_floor() -> None:
    rule = StoppingRule(TimingSettings(floor_rounds=30, ceiling_rounds=200, ceiling_s=0.5, round_goal=0.01))
    rounds = run(rule, noise=0.5, kernel_ms=5.0)  # ~10 ms a round
    assert 45 <= rounds <= 56, rounds
    assert rule.stats().reason == "ceiling: timed work"
    slow = StoppingRule(TimingSettings(floor_rounds=30, ceiling_rounds=200, ceiling_s=0.5, round_goal=0.01))
    assert run(slow, noise=0.5, kernel_ms=100.0) == 30  # past the ceiling from round 3 on: the floor still holds


def test_rounds_set_aside_do_not_count_but_are_bounded() -> None:
    rule = StoppingRule(GPU)
    for _ in range(399):
        rule.add_set_aside()
        assert not rule.is_finished()
    rule.add_set_aside()
    assert rule.is_finished() and rule.stats().rounds == 0 and rule.stats().set_aside == 400


def test_the_rule_measures_the_interval_the_verdict_reports() -> None:
    # the rule draws the verdict's bootstrap over rounds (ratios.drawn_estimates, within buffer sets) and takes the
    # verdict's estimator: for the same samples, the same ratio and, up to resampling noise, the same half-width
    rng = random.Random(7)
    b = [0.05 * (1 + rng.gauss(0, 0.03)) for _ in range(80)]
    c = [0.05 * (1 + rng.gauss(0, 0.03)) for _ in range(80)]
    labels = [r % 4 for r in range(80)]
    rule = StoppingRule(GPU)
    for x, y, k in zip(b, c, labels):
        rule.add_measurement(x, y, k)
    (iv,), _ = intervals([[(b, c, labels)]], median, rounds=2000)
    ratio = median(b) / median(c)
    verdict_half = max(iv[1] / ratio - 1, 1 - iv[0] / ratio)
    assert rule.interval_half_width() == pytest.approx(verdict_half, rel=0.25)
    assert rule.ratio == pytest.approx(ratio, rel=1e-12)


def test_settings_come_from_the_environment_and_travel_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TimingSettings.from_env(gpu=True).floor_rounds == 30
    assert TimingSettings.from_env(gpu=False).floor_s == 0.08
    monkeypatch.setenv("KERNELEVOLVE_MIN_SAMPLES", "12")
    monkeypatch.setenv("KERNELEVOLVE_MAX_SAMPLES", "50")
    monkeypatch.setenv("KERNELEVOLVE_ROUND_GOAL", "0.005")
    monkeypatch.setenv("KERNELEVOLVE_TIMING_CEILING_S", "2.5")
    monkeypatch.setenv("KERNELEVOLVE_BUFFER_SETS", "not a number")
    s = TimingSettings.from_env(gpu=True)
    assert (s.floor_rounds, s.ceiling_rounds, s.round_goal, s.ceiling_s, s.buffer_sets) == (12, 50, 0.005, 2.5, 4)
    assert TimingSettings.from_message(dict(s.to_message(), unknown=1)) == s


def test_a_kernel_under_10_us_stops_at_its_own_looser_goal() -> None:
    # graph-timed kernels (under ~10 us) need their ratio to +-5% (the fidelity goal), not +-2%: the same noisy
    # samples stop much earlier at round_goal_short
    assert run(StoppingRule(GPU, goal=GPU.round_goal_short), noise=0.06) < run(StoppingRule(GPU), noise=0.06)
    rule = StoppingRule(GPU, goal=0.025)
    run(rule, noise=0.06)
    assert rule.stats().reason == "precise" and rule.stats().half_width <= 0.025


def test_the_run_order_does_not_keep_a_pass_going() -> None:
    # the second kernel of a round 20% slower: over both orders mixed, each kernel's samples are two clusters 20%
    # apart and the median's bootstrap swings between them; balanced over the orders (as the verdict takes them),
    # the pass is as precise as its rounds
    from kernelevolve_harness.shape_timing import round_order
    rng = random.Random(3)
    balanced, mixed = StoppingRule(GPU), StoppingRule(GPU)
    for r in range(60):
        first = round_order(r, 4)
        b = 0.05 * (1.2 if first else 1.0) * (1 + rng.gauss(0, 0.005))
        c = 0.05 * (1.0 if first else 1.2) * (1 + rng.gauss(0, 0.005))
        balanced.add_measurement(b, c, r % 4, order=first)
        mixed.add_measurement(b, c, r % 4)
    assert balanced.interval_half_width() < 0.005
    assert mixed.interval_half_width() > 0.05


def test_a_candidate_far_below_the_baseline_stops_once_that_is_sure() -> None:
    # 2.5 times slower (0.4x), samples as noisy as those that take a ratio near 1.00 past the floor: the pass stops
    # once its interval lies below half the baseline's speed within +-5%, long before +-1%; the ratio it reports is
    # the same (within its interval)
    slow = StoppingRule(GPU)
    rounds = run(slow, noise=0.15, slower=2.5)
    stats = slow.stats()
    assert stats.reason == "far below" and stats.half_width is not None and stats.half_width <= GPU.far_goal
    assert slow.ratio == pytest.approx(0.4, rel=stats.half_width)
    precise = StoppingRule(GPU)
    assert rounds < run(precise, noise=0.15, slower=20.0 / 19.0) and precise.stats().reason != "far below"
    # above half the baseline's speed (0.53x), or with the rule off (KERNELEVOLVE_FAR_BELOW=0), the pass aims at +-1%
    near = StoppingRule(GPU)
    run(near, noise=0.15, slower=1.9)
    assert near.stats().reason != "far below"
    off = StoppingRule(TimingSettings(floor_rounds=30, ceiling_rounds=200, ceiling_s=1e9, round_goal=0.01,
                                      far_below=0.0))
    assert run(off, noise=0.15, slower=2.5) > rounds and off.stats().reason != "far below"


def test_a_pass_far_below_may_stop_before_the_floor_and_no_other() -> None:
    # tight samples 2.5 times slower stop at the far floor (10 rounds), not at the floor (30); the same samples at
    # 0.53x, or with the far floor at the floor, take the floor's 30; and no pass stops before the far floor
    far = StoppingRule(GPU)
    assert run(far, noise=0.01, slower=2.5) == GPU.far_floor_rounds == 10
    assert far.stats().reason == "far below" and far.ratio == pytest.approx(0.4, rel=0.05)
    assert run(StoppingRule(GPU), noise=0.01, slower=1.9) == 30
    floor = StoppingRule(TimingSettings(floor_rounds=30, ceiling_rounds=200, ceiling_s=1e9, round_goal=0.01,
                                        far_floor_rounds=30))
    assert run(floor, noise=0.01, slower=2.5) == 30 and floor.stats().reason == "precise"
    # noisier, it stops far below once its interval is within +-5%, between the two floors
    noisy = StoppingRule(GPU)
    assert 10 < run(noisy, noise=0.15, slower=2.5) < 30 and noisy.stats().reason == "far below"
    # as noisy as no number of rounds makes precise (+-50% a sample): wholly below a quarter of the baseline's
    # speed, it stops at the far floor however wide; at a third of the baseline's speed it runs to the ceiling
    wide = StoppingRule(GPU)
    assert run(wide, noise=0.5, slower=20.0) == 10 and wide.stats().reason == "far below"
    assert wide.stats().half_width > GPU.far_goal and wide.ratio * (1 + wide.stats().half_width) < 0.25
    third = StoppingRule(GPU)
    assert run(third, noise=0.5, slower=3.0) == 200 and third.stats().reason == "ceiling: rounds"


def test_two_run_orders_that_disagree_do_not_stop_a_pass_far_below() -> None:
    # a kernel judged against itself whose second-run calls read 12 times slower in one order (as a Liger softmax
    # read on 512x32000 on an H100: 0.28 balanced, its orders about 1.0 and 0.08): balanced over the orders the
    # ratio is 0.28 with a narrow interval, but one order reads the two kernels alike, so the pass goes on to the
    # floor; with both orders 3.5 times slower it stops at the far floor as before
    from kernelevolve_harness.shape_timing import round_order
    rng = random.Random(5)

    def feed(rule: StoppingRule, slow_first: float, slow_second: float) -> int:
        for r in range(200):
            first = round_order(r, 4)
            b = 0.05 * (1 + rng.gauss(0, 0.01))
            c = 0.05 * (slow_first if first else slow_second) * (1 + rng.gauss(0, 0.01))
            rule.add_measurement(b, c, r % 4, order=first)
            if rule.is_finished():
                return r + 1
        return 200

    split = StoppingRule(GPU)
    assert feed(split, 12.5, 1.0) >= GPU.floor_rounds and split.stats().reason != "far below"
    assert split.ratio == pytest.approx(0.28, rel=0.05) and max(split.order_ratios) == pytest.approx(1.0, rel=0.05)
    alike = StoppingRule(GPU)
    assert feed(alike, 3.5, 3.5) == GPU.far_floor_rounds and alike.stats().reason == "far below"


def test_far_below_reads_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    s = TimingSettings.from_env(gpu=True)
    assert (s.far_below, s.far_goal, s.far_floor_rounds) == (0.5, 0.05, 10)
    monkeypatch.setenv("KERNELEVOLVE_FAR_BELOW", "0")
    monkeypatch.setenv("KERNELEVOLVE_FAR_GOAL", "0.1")
    monkeypatch.setenv("KERNELEVOLVE_FAR_FLOOR", "1")
    s = TimingSettings.from_env(gpu=False)
    assert (s.far_below, s.far_goal, s.far_floor_rounds) == (0.0, 0.1, 3)
